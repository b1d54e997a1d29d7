/**
 * The automatic maintenance policy, with two instances on one root looking every second: a table a user keeps
 * writing to through both is compacted while the writes go on, by one instance at a time, and loses nothing; a
 * namespace's property turns the policy off for its tables; a table's retention property has its old versions
 * cleaned up; a property that cannot be read is reported.
 */
import type { Table } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, rows, until as waitFor } from "./client";
import { startServer, type TestServer } from "./server";

interface Job {
  job_id: string;
  kind: string;
  trigger: string;
  requested_by: string;
  status: string;
  created_at: string;
  finished_at: string | null;
  parameters: Record<string, string>;
  compaction?: { version_before: number; version_after: number } | null;
}

interface Health {
  fragments: number;
  small_fragments: number;
  versions: number;
  last_job: Job | null;
  policy: { enabled: boolean; compact_small_fragments: number; retention_seconds: number; problems: string[] };
  due: { compact: string | null; cleanup: boolean };
}

const POLICY = {
  QUIVER_MAINTENANCE: "on",
  QUIVER_MAINTENANCE_INTERVAL_S: "1",
  QUIVER_MAINTENANCE_COMPACT_SMALL_FRAGMENTS: "8",
};

let a: TestServer;
let b: TestServer;
let apiA: ReturnType<typeof client>;
let apiB: ReturnType<typeof client>;

const health = async (table: string) => (await apiA.post<Health>(`/v1/table/${table}/maintenance/health`, {})).body;
const jobs = async (table: string) => (await apiA.post<{ jobs: Job[] }>(`/v1/table/${table}/maintenance/jobs/list`, {})).body.jobs;
const ids = async (table: string) =>
  [...(await apiB.post<Table>(`/v1/table/${table}/query`, { columns: ["id"], k: 100_000 })).body.getChild("id")!].map(Number).sort((x, y) => x - y);

/** Waits for `what`, looking every 250 ms, for 90,000 ms unless told otherwise. */
const until = <T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, ms = 90_000) => waitFor(what, probe, done, ms, 250);

beforeAll(async () => {
  a = await startServer(POLICY);
  b = await startServer(POLICY, { root: a.root });
  apiA = client(a.url, a.auth);
  apiB = client(b.url, b.auth);
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
});

describe("the automatic maintenance policy", () => {
  it("compacts a table while a user writes to it through two instances, one instance at a time, losing nothing", async () => {
    expect((await apiA.post("/v1/namespace/quiet/create", { properties: { "quiver.maintenance": "off" } })).status).toBe(200);
    expect((await apiA.arrow("/v1/table/quiet$t/create", rows(0, 10))).status).toBe(200);
    for (let i = 1; i <= 12; i++) expect((await apiA.arrow("/v1/table/quiet$t/insert", rows(i * 10, i * 10 + 10))).status).toBe(200);

    expect((await apiA.arrow("/v1/table/busy/create", rows(0, 10))).status).toBe(200);
    const written = Array.from({ length: 10 }, (_, i) => i);
    for (let i = 1; i <= 60; i++) {
      const api = i % 2 ? apiA : apiB;
      expect((await api.arrow("/v1/table/busy/insert", rows(i * 10, i * 10 + 10))).status).toBe(200);
      written.push(...Array.from({ length: 10 }, (_, k) => i * 10 + k));
      if (i % 20 === 0) expect((await api.post("/v1/table/busy/delete", { predicate: `id = ${i * 10}` })).status).toBe(200);
      if (i % 20 === 0) written.splice(written.indexOf(i * 10), 1);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const lastWrite = Date.now();
    const compacted = await until(
      "compaction by the policy",
      () => health("busy"),
      (h) => h.small_fragments < 8 && h.last_job?.status === "succeeded",
    );
    expect(compacted.last_job).toMatchObject({ kind: "compact", trigger: "policy", requested_by: "quiver:policy" });
    expect(compacted.last_job!.parameters.reason).toMatch(/small fragments/);
    expect(await ids("busy")).toEqual(written);
    // The policy's own change is in the audit log like any caller's: by the policy, the versions it made, and why.
    const compaction = compacted.last_job!.compaction!;
    const audit = await until(
      "the policy's audit entry",
      () => apiA.get<{ entries: Array<Record<string, unknown>> }>("/v1/admin/audit?principal=quiver:policy&target=busy"),
      (r) => r.body.entries.some((e) => e.requestId === `job:${compacted.last_job!.job_id}`),
    );
    expect(audit.body.entries.find((e) => e.requestId === `job:${compacted.last_job!.job_id}`)).toMatchObject({
      principal: { kind: "service", id: "quiver:policy", name: "automatic maintenance policy" },
      action: "CompactTable",
      database: "default",
      target: "busy",
      status: 200,
      outcome: "ok",
      detail: expect.stringMatching(
        new RegExp(`^compaction made versions? ${compaction.version_before + 1}(-${compaction.version_after})?.*; why: .*small fragments`),
      ) as unknown,
    });

    // The lease: the table's jobs, whichever instance ran them, never overlap in time.
    const history = (await jobs("busy")).filter((j) => j.status !== "running").reverse();
    expect(history.length).toBeGreaterThan(0);
    // The policy compacted while the user was still writing.
    expect(Date.parse(history[0].created_at)).toBeLessThan(lastWrite);
    for (let i = 1; i < history.length; i++) expect(Date.parse(history[i].created_at)).toBeGreaterThanOrEqual(Date.parse(history[i - 1].finished_at!));

    // The namespace that turned the policy off: due, and left alone.
    const quiet = await health("quiet$t");
    expect(quiet.policy.enabled).toBe(false);
    expect(quiet.due.compact).toMatch(/13 small fragments/);
    expect(await jobs("quiet$t")).toEqual([]);
  });

  it("cleans up versions past a table's retention, keeping the latest", async () => {
    expect((await apiA.post("/v1/table/short/declare", { properties: { "quiver.maintenance.retention_seconds": "2" } })).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await apiA.arrow("/v1/table/short/insert", rows(i * 10, i * 10 + 10))).status).toBe(200);
    const latest = (await health("short")).versions;
    expect((await health("short")).policy.retention_seconds).toBe(2);
    await until(
      "cleanup by the policy",
      () => apiA.post<{ versions: Array<{ version: number }> }>("/v1/table/short/version/list"),
      (r) => r.body.versions.length === 1,
    );
    // The job's record says it is done only after its work, which the version list already shows.
    const finished = await until(
      "the cleanup job's record",
      () => jobs("short"),
      (list) => list.some((j) => j.kind === "cleanup" && j.status !== "running"),
    );
    expect(finished.find((j) => j.kind === "cleanup" && j.status !== "running")).toMatchObject({ trigger: "policy", status: "succeeded" });
    expect((await apiA.post<{ versions: Array<{ version: number }> }>("/v1/table/short/version/list")).body.versions[0].version).toBeGreaterThanOrEqual(latest);
    expect(await ids("short")).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it("reports a property it cannot read, and applies the setting below it", async () => {
    expect((await apiA.post("/v1/namespace/odd/create", { properties: { "quiver.maintenance.compact_small_fragments": "lots" } })).status).toBe(200);
    expect((await apiA.arrow("/v1/table/odd$t/create", rows(0, 10))).status).toBe(200);
    const odd = await health("odd$t");
    expect(odd.policy.compact_small_fragments).toBe(8);
    expect(odd.policy.problems).toEqual(["namespace 'odd': quiver.maintenance.compact_small_fragments='lots' is not a whole number of at least 2; ignored"]);
  });
});
