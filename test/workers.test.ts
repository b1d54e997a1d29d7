/**
 * `npm start` with QUIVER_WORKERS: several server processes on one port, sharing every state through the data root.
 * Each serves requests, a worker that dies is replaced while the others go on, and SIGTERM stops them all.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { tableToIPC } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, expectError, postOnNewConnection, rows, until } from "./client";
import { ErrorCode } from "@/lib/contract/errors";
import { isStopped, startServer, type TestServer } from "./server";

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  // A write to `paused` stops its worker (SIGSTOP) once its claim is in the ledger, inside the table's write turn.
  server = await startServer({ QUIVER_FAILPOINTS: "pause-after-claim:paused" }, { workers: 2 });
  api = client(server.url, server.auth);
});
afterAll(() => server?.stop());

function workerPids(): number[] {
  const listed = spawnSync("ps", ["-o", "pid=", "--ppid", String(server.pid)], { encoding: "utf8" }).stdout;
  return listed.split("\n").filter(Boolean).map(Number).sort();
}

/** CPU time a process has used, in clock ticks. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** A count of the table's rows on a connection of its own, so that the port's round robin hands it to the next worker. */
async function countOnNewConnection(): Promise<number> {
  const { status, text } = await postOnNewConnection(`${server.url}/v1/table/w/count_rows`, server.auth);
  if (status !== 200) throw new Error(`${status}: ${text}`);
  return JSON.parse(text) as number;
}

describe("QUIVER_WORKERS=2", () => {
  it("runs two workers on one port, each answering with the same data", async () => {
    const workers = workerPids();
    expect(workers).toHaveLength(2);
    expect((await api.arrow("/v1/table/w/create", rows(0, 50))).status).toBe(200);
    const before = workers.map(cpuTicks);
    const counts = await Promise.all(Array.from({ length: 60 }, countOnNewConnection));
    expect(new Set(counts)).toEqual(new Set([50]));
    const used = workers.map((pid, i) => cpuTicks(pid) - before[i]);
    expect(
      used.every((ticks) => ticks > 0),
      `CPU ticks of each worker while answering: ${used}`,
    ).toBe(true);
  });

  it("replaces a worker that dies, and the other goes on answering meanwhile", async () => {
    const [victim, survivor] = workerPids();
    process.kill(victim, "SIGKILL");
    // Connections the port hands out before the primary has seen the death are lost with the worker, as with any crash.
    for (let i = 0; i < 100 && !server.output().includes(`worker ${victim} exited (SIGKILL)`); i++) await new Promise((r) => setTimeout(r, 50));
    expect(await Promise.all(Array.from({ length: 10 }, countOnNewConnection))).toEqual(Array(10).fill(50));
    let now = workerPids();
    for (let i = 0; i < 300 && now.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      now = workerPids();
    }
    expect(now).toHaveLength(2);
    expect(now).toContain(survivor);
    expect(now).not.toContain(victim);
    expect((await api.arrow("/v1/table/w/insert", rows(50, 60))).status).toBe(200);
    expect(await Promise.all(Array.from({ length: 10 }, countOnNewConnection))).toEqual(Array(10).fill(60));
  });

  it("lets the workers commit to one table in turn: small inserts from 8 clients through both, each answered, every row once", async () => {
    expect((await api.arrow("/v1/table/turns/create", rows(0, 1))).status).toBe(200);
    const statuses: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next++; i < 240; i = next++) {
          const body = tableToIPC(rows(1 + i * 10, 11 + i * 10), "stream");
          statuses.push((await postOnNewConnection(`${server.url}/v1/table/turns/insert`, server.auth, body)).status);
        }
      }),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect((await api.post("/v1/table/turns/count_rows", {})).body).toBe(2401);
    // Summed over the workers: the table's turn went from one worker to the other, and each took turns.
    const metrics = String((await api.get("/metrics")).body);
    const turns = (holder: string) => Number(new RegExp(`quiver_write_turns_total\\{last_held_by="${holder}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
    expect(turns("another_worker"), metrics).toBeGreaterThan(0);
    expect(turns("another_worker") + turns("this_worker")).toBeGreaterThan(1);
  });

  it("gives a write through a worker that the other's commits left behind one turn, catching up within it", async () => {
    expect((await api.arrow("/v1/table/behind/create", rows(0, 1))).status).toBe(200);
    const turns = async () => {
      const metrics = String((await api.get("/metrics")).body);
      return [...metrics.matchAll(/quiver_write_turns_total\{last_held_by="\w+"\} (\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
    };
    const before = await turns();
    // One at a time, each on a connection of its own: the port's round robin sends each to the worker that did not
    // make the last commit.
    for (let i = 0; i < 10; i++) {
      const body = tableToIPC(rows(1 + i * 10, 11 + i * 10), "stream");
      expect((await postOnNewConnection(`${server.url}/v1/table/behind/insert`, server.auth, body)).status).toBe(200);
    }
    expect(await turns()).toBe(before + 10);
    expect((await api.post("/v1/table/behind/count_rows", {})).body).toBe(101);
  });

  it("lets a drop through one worker wait for a write the other is in the middle of, then drop the table whole", async () => {
    expect((await api.arrow("/v1/table/paused/create", rows(0, 1))).status).toBe(200);
    const stopped = () => workerPids().filter(isStopped);
    // Each on a connection of its own, so the port's round robin hands the drop to the worker that is not stopped.
    const writing = postOnNewConnection(
      `${server.url}/v1/table/paused/insert`,
      { ...server.auth, "x-request-id": "paused-insert-1" },
      tableToIPC(rows(1, 5), "stream"),
    );
    const [writer] = await until(
      "the writing worker's pause",
      async () => stopped(),
      (pids) => pids.length === 1,
      10_000,
      20,
    );
    let dropAnswered = false;
    const dropping = postOnNewConnection(`${server.url}/v1/table/paused/drop`, server.auth).finally(() => (dropAnswered = true));
    try {
      // The drop waits for the table's turn on the machine, which the stopped write holds.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(dropAnswered, "the drop answered while a write to the table was under way in the other worker").toBe(false);
    } finally {
      // Resumed whatever the check found, so that the tests after this one have both workers.
      process.kill(writer, "SIGCONT");
    }
    const written = await writing;
    expect(written.status, written.text).toBe(200);
    expect(JSON.parse(written.text)).toMatchObject({ version: 2 });
    const dropped = await dropping;
    expect(dropped.status, dropped.text).toBe(200);
    expectError(await api.post("/v1/table/paused/describe", {}), 404, ErrorCode.TableNotFound);
  });

  it("stops every worker on SIGTERM", async () => {
    const workers = workerPids();
    await server.stop();
    const alive = workers.filter((pid) => spawnSync("kill", ["-0", String(pid)]).status === 0);
    expect(alive).toEqual([]);
  });
});

describe("QUIVER_WORKERS that is no number of workers", () => {
  it("stops before starting, naming the setting", () => {
    for (const value of ["0", "two", "1.5"]) {
      let output = "";
      try {
        execFileSync(process.execPath, ["scripts/start.mjs"], { env: { ...process.env, QUIVER_WORKERS: value, PORT: "1" }, encoding: "utf8", stdio: "pipe" });
      } catch (err) {
        const failed = err as { status: number; stderr: string };
        expect(failed.status).toBe(1);
        output = failed.stderr;
      }
      expect(output).toContain(`QUIVER_WORKERS must be a whole number from 1 to 256, not '${value}'`);
    }
  });
});
