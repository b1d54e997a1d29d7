/**
 * Maintenance of a table that took many small writes: its health, compaction (fragments, deletions, new rows
 * indexed) as a job, and the cleanup of old versions with its dry run, keeping the latest and tagged versions; all
 * through the API on real Lance tables, with a user writing while compaction runs.
 */
import type { Table } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, expectError, rows } from "./client";
import { BOOKKEEPING, rootSnapshot, startServer, storeOf, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

let server: TestServer;
let api: ReturnType<typeof client>;

interface Job {
  job_id: string;
  status: string;
  kind: string;
  trigger: string;
  requested_by: string;
  progress: { done: number; total: number } | null;
  compaction: Record<string, number> | null;
  cleanup: { versions_removed: number; bytes_removed: number; versions: Array<{ version: number }> } | null;
  error: { code: number; message: string } | null;
  finished_at: string | null;
}

interface Plan {
  versions: Array<{ version: number; timestamp: string }>;
  kept: { latest: number; tagged: Array<{ tag: string; version: number }>; branch_parents: unknown[]; newer: number };
  files: number;
  bytes: number;
}

const ids = async (table: string, at: Record<string, unknown> = {}) =>
  [...(await api.post<Table>(`/v1/table/${table}/query`, { columns: ["id"], k: 100_000, ...at })).body.getChild("id")!].map(Number).sort((a, b) => a - b);
const versions = async (table: string) =>
  (await api.post<{ versions: Array<{ version: number }> }>(`/v1/table/${table}/version/list`)).body.versions.map((v) => v.version);
const health = async (table: string) => (await api.post<Record<string, number | string | null>>(`/v1/table/${table}/maintenance/health`, {})).body;

async function finished(table: string, jobId: string): Promise<Job> {
  for (;;) {
    const { body } = await api.post<{ job: Job }>(`/v1/table/${table}/maintenance/jobs/describe`, { job_id: jobId });
    if (body.job.status !== "running") return body.job;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A table of `writes` small appends after its first version, with deleted rows and an index built half-way. */
async function smallWrites(table: string, writes: number) {
  expect((await api.arrow(`/v1/table/${table}/create`, rows(0, 10))).status).toBe(200);
  for (let i = 1; i <= writes; i++) {
    expect((await api.arrow(`/v1/table/${table}/insert`, rows(i * 10, i * 10 + 10))).status).toBe(200);
    if (i === writes / 2) expect((await api.post(`/v1/table/${table}/create_index`, { column: "id", index_type: "BTREE" })).status).toBe(200);
  }
  expect((await api.post(`/v1/table/${table}/delete`, { predicate: "id % 10 = 3" })).status).toBe(200);
}

const expected = (writes: number) => Array.from({ length: (writes + 1) * 10 }, (_, i) => i).filter((i) => i % 10 !== 3);

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
});
afterAll(() => server?.stop());

describe("a table's health", () => {
  it("counts fragments, small ones, deleted rows, versions and rows no index covers", async () => {
    await smallWrites("h", 12);
    const h = await health("h");
    expect(h).toMatchObject({ fragments: 13, small_fragments: 13, deleted_rows: 13, rows: 117, versions: 15, indices: 1, running_job: null, last_job: null });
    // The six appends after the index, less their deleted rows.
    expect(h.unindexed_rows).toBe(54);
    expect(Date.parse(h.oldest_version_time as string)).toBeLessThanOrEqual(Date.now());
    expectError(await api.post("/v1/table/nope/maintenance/health", {}), 404, ErrorCode.TableNotFound);
  });
});

describe("compaction", () => {
  it("rewrites small fragments into one, materialises deletions and indexes new rows, keeping every row", async () => {
    await smallWrites("c", 20);
    const before = await ids("c");
    expect(before).toEqual(expected(20));
    const reply = await api.post<{ job: Job }>("/v1/table/c/maintenance/compact?wait=true", {});
    expect(reply.status).toBe(200);
    const job = reply.body.job;
    expect(job).toMatchObject({ status: "succeeded", kind: "compact", trigger: "request", error: null });
    expect(job.compaction).toMatchObject({
      version_before: 23,
      fragments_before: 21,
      // Lance compacts the fragments an index covers apart from those it does not.
      fragments_after: 2,
      small_fragments_before: 21,
      deleted_rows_before: 21,
      deleted_rows_after: 0,
      unindexed_rows_before: 90,
      unindexed_rows_after: 0,
      conflicts_retried: 0,
    });
    expect(job.compaction!.version_after).toBeGreaterThan(23);
    expect(await ids("c")).toEqual(before);
    expect(await health("c")).toMatchObject({ fragments: 2, small_fragments: 2, deleted_rows: 0, unindexed_rows: 0 });
    // An older version still reads as it was.
    expect(await ids("c", { version: 2 })).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it("runs as a job that outlives the request, listed newest first; a second job on the table meanwhile is refused", async () => {
    await smallWrites("j", 10);
    const started = await api.post<{ job: Job }>("/v1/table/j/maintenance/compact", {});
    expect(started.status).toBe(202);
    expect(started.body.job).toMatchObject({ status: "running", kind: "compact", requested_by: expect.stringContaining("key:") });
    expectError(await api.post("/v1/table/j/maintenance/compact", {}), 409, ErrorCode.ConcurrentModification);
    const done = await finished("j", started.body.job.job_id);
    expect(done.status).toBe("succeeded");
    expect(done.compaction).toMatchObject({ fragments_before: 11, fragments_after: 2 });
    const again = (await api.post<{ job: Job }>("/v1/table/j/maintenance/compact?wait=true", {})).body.job;
    const listed = (await api.post<{ jobs: Job[] }>("/v1/table/j/maintenance/jobs/list", {})).body.jobs;
    expect(listed.map((j) => j.job_id)).toEqual([again.job_id, done.job_id]);
    expect((await health("j")).last_job).toMatchObject({ job_id: again.job_id, status: "succeeded" });
    expectError(await api.post("/v1/table/j/maintenance/jobs/describe", { job_id: "00000000000000-00000000" }), 404, ErrorCode.TransactionNotFound);
    expectError(await api.post("/v1/table/j/maintenance/jobs/describe", { job_id: "../../auth/keys" }), 404, ErrorCode.TransactionNotFound);
  });

  it("loses none of the writes a user makes while it runs", async () => {
    await smallWrites("w", 30);
    const written: number[] = [];
    let deleted = false;
    // Writes sent before the job finished (by its own record) were made while it ran. A compaction can finish before
    // the first write is sent, so rounds go on (each compacting what the last wrote) until that has happened.
    let writesWhileRunning = 0;
    for (let round = 0; writesWhileRunning === 0 && round < 10; round++) {
      const started = await api.post<{ job: Job }>("/v1/table/w/maintenance/compact", {});
      expect(started.status).toBe(202);
      const sent: number[] = [];
      for (let running = true; running;) {
        const first = 10_000 + written.length;
        sent.push(Date.now());
        const inserts = Array.from({ length: 4 }, (_, i) => api.arrow("/v1/table/w/insert", rows(first + i * 5, first + i * 5 + 5)));
        expect((await Promise.all(inserts)).map((r) => r.status)).toEqual([200, 200, 200, 200]);
        written.push(...Array.from({ length: 20 }, (_, i) => first + i));
        if (!deleted) expect((await api.post("/v1/table/w/delete", { predicate: "id = 0" })).status).toBe(200);
        deleted = true;
        const job = (await api.post<{ job: Job }>("/v1/table/w/maintenance/jobs/describe", { job_id: started.body.job.job_id })).body.job;
        running = job.status === "running";
      }
      const job = await finished("w", started.body.job.job_id);
      expect(job.status).toBe("succeeded");
      writesWhileRunning += sent.filter((at) => at < Date.parse(job.finished_at!)).length;
    }
    expect(writesWhileRunning).toBeGreaterThan(0);
    expect(await ids("w")).toEqual([...expected(30).filter((i) => i !== 0), ...written]);
  });

  it("is for a table's admins, and refuses what it does not take", async () => {
    const viewerKey = (await api.post<{ key: string }>("/v1/admin/keys/create", { name: "maint-viewer", role: "viewer" })).body.key;
    const viewer = client(server.url, { "x-api-key": viewerKey });
    expectError(await viewer.post("/v1/table/c/maintenance/compact", {}), 403, ErrorCode.PermissionDenied);
    expect((await viewer.post("/v1/table/c/maintenance/health", {})).status).toBe(200);
    expectError(await api.post("/v1/table/c/maintenance/compact", { target_rows_per_fragment: 10 }), 400, ErrorCode.InvalidInput);
    expectError(await api.post("/v1/table/nope/maintenance/compact", {}), 404, ErrorCode.TableNotFound);
  });
});

describe("cleaning up old versions", () => {
  it("previews, then removes versions and the files only they use, keeping the latest and tagged versions", async () => {
    await smallWrites("v", 6);
    expect((await api.post("/v1/table/v/tags/create", { tag: "keep", version: 3 })).status).toBe(200);
    await api.post("/v1/table/v/maintenance/compact?wait=true", {});
    const all = await versions("v");
    const latest = Math.max(...all);
    const unchanged = [...BOOKKEEPING, ".quiver/maintenance"];
    const snapshot = await rootSnapshot(server, unchanged);
    const preview = await api.post<Plan>("/v1/table/v/maintenance/cleanup", { older_than_seconds: 0, dry_run: true });
    expect(preview.status).toBe(200);
    const plan = preview.body;
    expect(plan.versions.map((v) => v.version)).toEqual(all.filter((v) => v !== latest && v !== 3));
    expect(plan.kept).toMatchObject({ latest, tagged: [{ tag: "keep", version: 3 }], branch_parents: [] });
    expect(plan.bytes).toBeGreaterThan(0);
    expect(plan.files).toBeGreaterThan(plan.versions.length);
    // The dry run changed nothing (but the audit log).
    expect(await rootSnapshot(server, unchanged)).toEqual(snapshot);
    const sizeBefore = [...(await storeOf(server).listInfo("v.lance/"))].reduce((sum, [, info]) => sum + info.size, 0);
    const job = (await api.post<{ job: Job }>("/v1/table/v/maintenance/cleanup?wait=true", { older_than_seconds: 0 })).body.job;
    expect(job.status).toBe("succeeded");
    expect(job.cleanup).toMatchObject({ versions_removed: plan.versions.length, bytes_removed: plan.bytes });
    expect(job.progress!.done).toBe(job.progress!.total);
    const sizeAfter = [...(await storeOf(server).listInfo("v.lance/"))].reduce((sum, [, info]) => sum + info.size, 0);
    expect(sizeBefore - sizeAfter).toBe(plan.bytes);
    expect(await versions("v")).toEqual([3, latest]);
    expect(await ids("v")).toEqual(expected(6));
    expect(await ids("v", { version: 3 })).toEqual(Array.from({ length: 30 }, (_, i) => i));
    // The table takes writes and compacts as before.
    expect((await api.arrow("/v1/table/v/insert", rows(500, 505))).status).toBe(200);
    expect((await api.post<{ job: Job }>("/v1/table/v/maintenance/compact?wait=true", {})).body.job.status).toBe("succeeded");
    expect(await ids("v")).toEqual([...expected(6), 500, 501, 502, 503, 504]);
  });

  it("keeps what a branch uses: the version it was made from and the table's files its versions name", async () => {
    await smallWrites("b", 4);
    expect((await api.post("/v1/table/b/branches/create", { name: "dev", from_version: 3 })).status).toBe(200);
    expect((await api.arrow("/v1/table/b/insert?branch=dev", rows(900, 905))).status).toBe(200);
    const onBranch = await ids("b", { branch: "dev" });
    expect(onBranch).toEqual([...Array.from({ length: 30 }, (_, i) => i), 900, 901, 902, 903, 904]);
    await api.post("/v1/table/b/maintenance/compact?wait=true", {});
    const latest = Math.max(...(await versions("b")));
    const job = (await api.post<{ job: Job; cleanup: Plan }>("/v1/table/b/maintenance/cleanup?wait=true", { older_than_seconds: 0 })).body.job;
    expect(job.status).toBe("succeeded");
    expect(job.cleanup).toMatchObject({ kept: { branch_parents: [{ branch: "dev", version: 3 }] } });
    expect(await versions("b")).toEqual([3, latest]);
    expect(await ids("b", { branch: "dev" })).toEqual(onBranch);
    expect(await ids("b")).toEqual(expected(4));
  });

  it("keeps versions made within the retention, and refuses a negative one", async () => {
    const plan = (await api.post<Plan>("/v1/table/h/maintenance/cleanup", { older_than_seconds: 3600, dry_run: true })).body;
    expect(plan).toMatchObject({ versions: [], files: 0, bytes: 0, kept: { newer: 15 } });
    expectError(await api.post("/v1/table/h/maintenance/cleanup", { older_than_seconds: -1 }), 400, ErrorCode.InvalidInput);
  });
});

describe("jobs across tables", () => {
  const list = (query = "") => api.get<{ jobs: Array<Job & { table: string[] }>; page_token?: string }>(`/v1/admin/jobs${query}`);

  it("lists every table's jobs newest first from one listing, filtered by table, kind and status, and paged", async () => {
    const all = (await list()).body;
    expect(all.page_token).toBeUndefined();
    const tablesSeen = new Set(all.jobs.map((j) => j.table.join("$")));
    expect(tablesSeen).toEqual(new Set(["c", "j", "w", "b", "v"]));
    const idsInOrder = all.jobs.map((j) => j.job_id);
    expect(idsInOrder).toEqual([...idsInOrder].sort().reverse());
    // One table's, as its own listing gives them.
    const own = (await api.post<{ jobs: Job[] }>("/v1/table/j/maintenance/jobs/list", {})).body.jobs.map((j) => j.job_id);
    expect((await list("?table=j")).body.jobs.map((j) => j.job_id)).toEqual(own);
    const cleanups = (await list("?kind=cleanup")).body.jobs;
    expect(cleanups.length).toBeGreaterThan(0);
    expect(cleanups.every((j) => j.kind === "cleanup")).toBe(true);
    expect((await list("?kind=cleanup&status=failed")).body.jobs).toEqual([]);
    expect((await list("?status=succeeded")).body.jobs.length).toBe(all.jobs.length);
    // Pages of two, each after the last, make the whole list.
    const paged: string[] = [];
    let token: string | undefined;
    do {
      const page: { jobs: Job[]; page_token?: string } = (await list(`?limit=2${token ? `&page_token=${token}` : ""}`)).body;
      expect(page.jobs.length).toBeLessThanOrEqual(2);
      paged.push(...page.jobs.map((j) => j.job_id));
      token = page.page_token;
    } while (token);
    expect(paged).toEqual(idsInOrder);
  });

  it("names a renamed table's jobs by its name now", async () => {
    expect((await api.post("/v1/namespace/kept/create", {})).status).toBe(200);
    expect((await api.arrow("/v1/table/kept$r/create", rows(0, 10))).status).toBe(200);
    const job = (await api.post<{ job: Job }>("/v1/table/kept$r/maintenance/compact?wait=true", {})).body.job;
    expect((await api.post("/v1/table/kept$r/rename", { new_table_name: "r2" })).status).toBe(200);
    const listed = (await list()).body.jobs.find((j) => j.job_id === job.job_id);
    expect(listed?.table).toEqual(["kept", "r2"]);
    expect((await list("?table=kept$r2")).body.jobs.map((j) => j.job_id)).toEqual([job.job_id]);
  });

  it("is for administrators, and refuses what it does not take", async () => {
    const viewerKey = (await api.post<{ key: string }>("/v1/admin/keys/create", { name: "jobs-viewer", role: "viewer" })).body.key;
    expectError(await client(server.url, { "x-api-key": viewerKey }).get("/v1/admin/jobs"), 403, ErrorCode.PermissionDenied);
    expectError(await list("?status=exploded"), 400, ErrorCode.InvalidInput);
    expectError(await list("?page_token=../../auth"), 400, ErrorCode.InvalidInput);
    expectError(await list("?table=nope"), 404, ErrorCode.TableNotFound);
  });
});
