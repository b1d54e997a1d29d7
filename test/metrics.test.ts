/**
 * GET /metrics: Prometheus text for an administrator, counting what the API did (requests by operation and status,
 * rows and bytes written, refusals, auth failures, cache lookups); under QUIVER_WORKERS, one scrape sums all workers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, expectError, postOnNewConnection, rows } from "./client";
import { startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

/** The samples of a Prometheus text exposition, by metric name and sorted labels. */
function parse(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels = match[3] ? [...match[3].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => `${k}=${v}`).sort() : [];
    samples.set(`${match[1]}{${labels.join(",")}}`, Number(match[4]));
  }
  return samples;
}

async function scrape(server: TestServer, headers: Record<string, string> = server.auth) {
  const res = await fetch(`${server.url}/metrics`, { headers });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

describe("GET /metrics on one process", () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    server = await startServer();
    api = client(server.url, server.auth);
  });
  afterAll(() => server?.stop());

  it("is refused without an administrator's credential, in the API's error shape", async () => {
    const anonymous = await fetch(`${server.url}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ status: 401, code: ErrorCode.Unauthenticated, instance: "/metrics" });
    const key = await api.post<{ key: string }>("/v1/admin/keys/create", { name: "reader", role: "viewer" });
    expect(key.status, JSON.stringify(key.body)).toBe(200);
    const viewer = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${key.body.key}` } });
    expect(viewer.status).toBe(403);
    expect(await viewer.json()).toMatchObject({ status: 403, code: ErrorCode.PermissionDenied });
  });

  it("refuses query parameters by name rather than ignoring them", async () => {
    const res = await fetch(`${server.url}/metrics?name[]=quiver_http_requests_total`, { headers: server.auth });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body).toMatchObject({ status: 400, code: ErrorCode.InvalidInput, instance: "/metrics" });
    expect(body.detail).toContain("query.name[]");
    expect((await scrape(server)).status).toBe(200);
  });

  it("counts requests, rows and bytes written, auth failures and cache lookups", async () => {
    expect((await api.arrow("/v1/table/m/create", rows(0, 100))).status).toBe(200);
    expect((await api.arrow("/v1/table/m/insert", rows(100, 130))).status).toBe(200);
    expect((await api.arrow("/v1/table/m/insert", rows(130, 135))).status).toBe(200);
    expectError(await api.arrow("/v1/table/nope/insert", rows(0, 1)), 404, ErrorCode.TableNotFound);
    for (let i = 0; i < 3; i++) expect((await api.post("/v1/table/m/describe", {})).status).toBe(200);
    expect((await fetch(`${server.url}/v1/table/m/describe`, { method: "POST", headers: { "x-api-key": "wrong" } })).status).toBe(401);

    const scraped = await scrape(server);
    expect(scraped.status).toBe(200);
    expect(scraped.type).toContain("text/plain");
    const m = parse(scraped.text);
    expect(m.get("quiver_http_requests_total{operation=CreateTable,status=200}")).toBe(1);
    expect(m.get("quiver_http_requests_total{operation=InsertIntoTable,status=200}")).toBe(2);
    expect(m.get("quiver_http_requests_total{operation=InsertIntoTable,status=404}")).toBe(1);
    expect(m.get("quiver_http_requests_total{operation=DescribeTable,status=200}")).toBe(3);
    expect(m.get("quiver_http_request_duration_seconds_count{operation=DescribeTable}")).toBe(4);
    expect(m.get("quiver_rows_written_total{operation=CreateTable}")).toBe(100);
    expect(m.get("quiver_rows_written_total{operation=InsertIntoTable}")).toBe(35);
    expect(m.get("quiver_arrow_body_bytes_total{}")).toBeGreaterThan(0);
    expect(m.get("quiver_auth_failures_total{status=401}")).toBeGreaterThanOrEqual(2);
    expect(m.get("quiver_auth_failures_total{status=403}")).toBe(1);
    // The first describe of the version reads it; the next two are answered from the cache.
    expect(m.get("quiver_cache_lookups_total{cache=table_description,result=hit}")).toBe(2);
    expect(m.get("quiver_cache_lookups_total{cache=table_description,result=miss}")).toBe(1);
    expect(m.get("quiver_heavy_requests_running{}")).toBe(0);
    expect(m.get("quiver_heavy_requests_queued{}")).toBe(0);
    expect(m.has("quiver_process_resident_memory_bytes{}")).toBe(true);
  });

  it("counts Quiver's own requests to the store by kind: a write's records, a read's looks", async () => {
    expect((await api.arrow("/v1/table/counted/create", rows(0, 10))).status).toBe(200);
    const store = async () => {
      const m = parse((await scrape(server)).text);
      return (kind: string) => m.get(`quiver_store_requests_total{kind=${kind},outcome=ok}`) ?? 0;
    };
    const before = await store();
    expect((await api.arrow("/v1/table/counted/insert", rows(10, 20))).status).toBe(200);
    const after = await store();
    // The claim, the answer, the version's record and the audit entry at least; the table's looks before them.
    expect(after("write") - before("write")).toBeGreaterThanOrEqual(4);
    expect(after("list") - before("list")).toBeGreaterThanOrEqual(1);
  });

  it("can be scraped with a key of the metrics role, which reads nothing else", async () => {
    const created = await api.post<{ key: string; record: { id: string; role: string } }>("/v1/admin/keys/create", { name: "prometheus", role: "metrics" });
    expect(created.status).toBe(200);
    expect(created.body.record.role).toBe("metrics");
    const bearer = { authorization: `Bearer ${created.body.key}` };
    const scraped = await scrape(server, bearer);
    expect(scraped.status).toBe(200);
    expect(parse(scraped.text).has("quiver_http_requests_total{operation=CreateApiKey,status=200}")).toBe(true);
    const scraper = client(server.url, { "x-api-key": created.body.key });
    expectError(await scraper.post("/v1/table/m/describe", {}), 403, ErrorCode.PermissionDenied);
    expectError(await scraper.get("/v1/admin/keys"), 403, ErrorCode.PermissionDenied);
    expect((await scraper.get<{ tables: string[] }>("/v1/table")).body.tables).toEqual([]);
    // Granting it a role on data changes nothing: the key reads metrics only.
    await api.post("/v1/admin/grants/create", {
      principal: { type: "key", name: created.body.record.id },
      role: "viewer",
      scope: { kind: "namespace", id: [] },
    });
    expectError(await scraper.post("/v1/table/m/describe", {}), 403, ErrorCode.PermissionDenied);
  });
});

describe("GET /metrics under QUIVER_WORKERS=2", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({}, { workers: 2 });
  });
  afterAll(() => server?.stop());

  /** A describe on a connection of its own, so that the port's round robin hands it to the next worker. */
  const describeOnNewConnection = async () => (await postOnNewConnection(`${server.url}/v1/table/w/describe`, server.auth)).status;

  it("sums the workers' counts in one scrape, whichever worker answers it", async () => {
    const api = client(server.url, server.auth);
    expect((await api.arrow("/v1/table/w/create", rows(0, 10))).status).toBe(200);
    expect(await Promise.all(Array.from({ length: 20 }, describeOnNewConnection))).toEqual(Array(20).fill(200));
    for (let i = 0; i < 4; i++) {
      const m = parse((await scrape(server)).text);
      expect(m.get("quiver_http_requests_total{operation=DescribeTable,status=200}")).toBe(20);
      expect(m.get("quiver_rows_written_total{operation=CreateTable}")).toBe(10);
    }
  });
});
