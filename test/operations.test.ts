/**
 * GET /v1/admin/operations, the operations page's figures: summed over every process of every instance of the root
 * (an `npm start` of two workers and a lone server on one root), or of one instance; the instances with their
 * processes and the leases' holders; a refused request, a commit conflict and a failed compaction in the next look;
 * a look's store requests the same on a root of many tables as of one.
 */
import { tableToIPC } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, expectError, rows, until } from "./client";
import { keyOf, startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";
import type { OperationsOverview } from "@/lib/contract/operations-overview";

/** How many times something happened in the window, from a chart of rates: each point's rate times its seconds. */
function counted(overview: OperationsOverview, chart: string, series: string): number {
  const found = overview.charts.find((c) => c.id === chart)?.series.find((s) => s.name === series);
  const perPoint = chart === "conflicts" || chart === "maintenance" ? overview.step_seconds / 60 : overview.step_seconds;
  return Math.round((found?.values ?? []).reduce<number>((sum, v) => sum + (v ?? 0) * perPoint, 0));
}

const look = async (server: TestServer, query = "", headers = server.auth) =>
  client(server.url, headers).get<OperationsOverview>(`/v1/admin/operations${query}`);

describe("the operations page's figures over the instances of a root", () => {
  let workers: TestServer;
  let lone: TestServer;
  beforeAll(async () => {
    // Maintenance on, its passes far apart: one process of the three holds the maintainer's lease.
    // A write to `held` commits and then never answers, as if its process had stopped there.
    const env = { QUIVER_MAINTENANCE: "on", QUIVER_MAINTENANCE_INTERVAL_S: "3600", QUIVER_FAILPOINTS: "hold-before-answer:held" };
    workers = await startServer(env, { workers: 2 });
    lone = await startServer(env, { root: workers.root });
  });
  afterAll(async () => {
    await lone?.stop();
    await workers?.stop();
  });

  it("sums every process of every instance, or one instance's, and lists the instances with their processes and leases", async () => {
    for (let i = 0; i < 7; i++) expect((await client(lone.url, lone.auth).get("/v1/namespace/%24/list")).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await client(workers.url, workers.auth).get("/v1/namespace/%24/list")).status).toBe(200);

    const all = await until(
      "both instances and all three processes up, one of them the maintainer",
      () => look(workers, "?window=900"),
      (r) => r.status === 200 && r.body.instances.flatMap((i) => i.processes).filter((p) => p.state === "up").length === 3 && r.body.maintainer !== null,
      20_000,
      500,
    );
    expect(all.body.window_seconds).toBe(900);
    expect(counted(all.body, "requests", "ListNamespaces")).toBe(12);
    expect(all.body.instances).toHaveLength(2);
    const [here, other] = all.body.instances;
    expect(here).toMatchObject({ this_instance: true, version: expect.any(String) });
    expect(here.processes).toHaveLength(2);
    expect(other.processes).toHaveLength(1);
    const maintainers = all.body.instances.flatMap((i) => i.processes).filter((p) => p.maintainer);
    expect(maintainers).toHaveLength(1);
    expect(all.body.maintainer?.process).toBe(maintainers[0].id);
    expect(all.body.policy).toMatchObject({ interval_seconds: 3600 });

    const loneOnly = await look(workers, `?window=900&instance=${other.id}`);
    expect(loneOnly.status).toBe(200);
    expect(counted(loneOnly.body, "requests", "ListNamespaces")).toBe(7);
    expect(loneOnly.body.instance).toBe(other.id);

    expectError(await look(workers, "?instance=not-an-instance"), 400, ErrorCode.InvalidInput);
    expectError(await look(workers, "?window=20"), 400, ErrorCode.InvalidInput);
    expectError(await look(workers, "?window=86400"), 400, ErrorCode.InvalidInput);
    expectError(await look(workers, "?windows=900"), 400, ErrorCode.InvalidInput);
  });

  it("lists a heavy request running on another instance with its table, and forgets it once it ends", async () => {
    expect((await client(lone.url, lone.auth).arrow("/v1/table/held/create", rows(0, 3))).status).toBe(200);
    const aborted = new AbortController();
    const held = fetch(`${lone.url}/v1/table/held/insert`, {
      method: "POST",
      headers: { ...lone.auth, "content-type": "application/vnd.apache.arrow.stream", "x-request-id": "held-insert-1" },
      body: tableToIPC(rows(3, 4), "stream") as unknown as BodyInit,
      signal: aborted.signal,
    }).catch(() => null);
    const seen = await until(
      "the held insert among the running requests",
      () => look(workers, "?window=900"),
      (r) => r.body.requests.running.some((a) => a.request_id === "held-insert-1"),
      10_000,
      200,
    );
    const loneInstance = seen.body.instances.find((i) => !i.this_instance)!;
    expect(seen.body.requests.running.find((a) => a.request_id === "held-insert-1")).toMatchObject({
      operation: "InsertIntoTable",
      target: "held",
      database: "default",
      state: "running",
      instance: loneInstance.id,
      process: loneInstance.processes[0].id,
      principal: expect.stringContaining("QUIVER_ADMIN_API_KEY"),
    });
    aborted.abort();
    await held;
  });

  it("answers administrators and metrics keys, and refuses everyone else", async () => {
    const api = client(workers.url, workers.auth);
    const metricsKey = (await api.post<{ key: string }>("/v1/admin/keys/create", { name: "scraper", role: "metrics" })).body.key;
    const viewerKey = (await api.post<{ key: string }>("/v1/admin/keys/create", { name: "reader", role: "viewer" })).body.key;
    // The held insert still runs (its process never lets it go); a metrics key sees no table, so not it either.
    const asMetrics = await look(workers, "", { "x-api-key": metricsKey });
    expect(asMetrics.status).toBe(200);
    expect(asMetrics.body.totals.requests).toBeGreaterThan(0);
    expect(asMetrics.body.requests).toEqual({ running: [], finished: [] });
    expect((await look(workers)).body.requests.running.map((a) => a.target)).toContain("held");
    expect((await client(workers.url, { "x-api-key": metricsKey }).get("/v1/whoami")).body).toMatchObject({ admin: false, metrics: true });
    expectError(await look(workers, "", { "x-api-key": viewerKey }), 403, ErrorCode.PermissionDenied);
    expect((await client(workers.url, { "x-api-key": viewerKey }).get("/v1/whoami")).body).toMatchObject({ admin: false, metrics: false });
    expectError(await look(workers, "", {}), 401, ErrorCode.Unauthenticated);
  });
});

describe("the operations page's figures of one instance", () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    // One heavy request at a time and none waiting: a second at once is refused. Every compaction of `broken` fails.
    server = await startServer({ QUIVER_MAX_HEAVY_REQUESTS: "1", QUIVER_QUEUE_WAIT_MS: "1", QUIVER_FAILPOINTS: "fail-maintenance:broken" });
    api = client(server.url, server.auth);
  });
  afterAll(() => server?.stop());

  /** The store requests this process made so far, from its own metrics. */
  const storeRequests = async () =>
    (await (await fetch(`${server.url}/metrics`, { headers: server.auth })).text())
      .split("\n")
      .filter((line) => line.startsWith("quiver_store_requests_total{"))
      .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);

  it("costs the store the same few requests on a root of forty tables as of one, and none per table", async () => {
    expect((await api.arrow("/v1/table/t0/create", rows(0, 3))).status).toBe(200);
    await look(server);
    const costOf = async () => {
      const before = await storeRequests();
      expect((await look(server)).status).toBe(200);
      return (await storeRequests()) - before;
    };
    const few = await costOf();
    for (let i = 1; i < 40; i++) expect((await api.arrow(`/v1/table/t${i}/create`, rows(0, 3))).status).toBe(200);
    await look(server);
    const many = await costOf();
    // The roster's listing and the two leases' current slots.
    expect(few).toBeLessThanOrEqual(3);
    expect(many).toBe(few);
  });

  it("shows a refused request, a commit conflict and a failed compaction in the next look", async () => {
    expect((await api.arrow("/v1/table/broken/create", rows(0, 10))).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await api.arrow("/v1/table/broken/insert", rows(10 + i, 11 + i))).status).toBe(200);
    const before = (await look(server, "?window=900")).body.totals;

    // A compaction that fails.
    const started = await api.post<{ job: { job_id: string } }>("/v1/table/broken/maintenance/compact", {});
    // 200 when it ended within the request's wait, 202 when it still ran.
    expect([200, 202], JSON.stringify(started.body)).toContain(started.status);
    await until(
      "the compaction failed",
      () => api.post<{ job: { status: string } }>("/v1/table/broken/maintenance/jobs/describe", { job_id: started.body.job.job_id }),
      (r) => r.body.job?.status === "failed",
      20_000,
      200,
    );
    // A writer that lost the race for version 2: it is taken.
    const second = (await api.post<{ version: { manifest_path: string } }>("/v1/table/broken/version/describe", { version: 2 })).body.version;
    expectError(
      await api.post("/v1/table/broken/version/create", { version: 2, manifest_path: keyOf(server, second.manifest_path) }),
      409,
      ErrorCode.ConcurrentModification,
    );
    // Eight inserts at once to a server that runs one heavy request at a time and lets none wait.
    const statuses = await Promise.all(Array.from({ length: 8 }, (_, i) => api.arrow("/v1/table/broken/insert", rows(100 + i, 101 + i)).then((r) => r.status)));
    const refused = statuses.filter((s) => s === 503).length;
    expect(refused).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 503).every((s) => s === 200)).toBe(true);

    const after = (await look(server, "?window=900")).body;
    expect(after.totals.maintenance_failed - before.maintenance_failed).toBe(1);
    expect(after.totals.conflicts - before.conflicts).toBe(1);
    expect(after.totals.refused - before.refused).toBe(refused);
    expect(counted(after, "maintenance", "compact failed")).toBe(1);
    expect(counted(after, "conflicts", "commit conflicts")).toBe(1);
    expect(counted(after, "errors", "503")).toBe(refused);
    // Each refusal among the requests that failed lately, with why.
    const failed = after.requests.finished.filter((a) => a.status === 503);
    expect(failed).toHaveLength(refused);
    expect(failed[0]).toMatchObject({ operation: "InsertIntoTable", target: "broken", state: "failed", error: expect.stringMatching(/.+/) });
  });
});
