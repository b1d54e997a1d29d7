/**
 * POST /v1/sql: joins, aggregates and windows over real Lance tables answer the rows computed here from the data
 * written; what Lance can do (columns, filter, limit) is done by Lance; a caller reads through SQL only the tables it
 * may read, however the statement names them; DuckDB reaches no file, URL, extension or setting; a cancelled query
 * stops; a query past a cap answers a clear error and the server keeps serving; every query is in the audit log.
 */
import { readFileSync } from "node:fs";
import { Field, FixedSizeList, Float32, Float64, Int32, Int64, Table, Utf8, vectorFromArray } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, expectError, type Reply } from "./client";
import { startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";
import type { SqlAnswerFacts } from "@/lib/contract/operations/sql";

const ORDERS = 5000;
const STATUSES = ["open", "paid", "shipped", "void"];
const order = (i: number) => ({ id: i, customer: (i * 7) % 100, amount: ((i * 37) % 1000) / 10, status: STATUSES[(i * 13) % 4] });

function ordersTable(from: number, to: number) {
  const os = Array.from({ length: to - from }, (_, k) => order(from + k));
  return new Table({
    id: vectorFromArray(
      os.map((o) => BigInt(o.id)),
      new Int64(),
    ),
    customer: vectorFromArray(
      os.map((o) => o.customer),
      new Int32(),
    ),
    amount: vectorFromArray(
      os.map((o) => o.amount),
      new Float64(),
    ),
    status: vectorFromArray(
      os.map((o) => o.status),
      new Utf8(),
    ),
  });
}

const customersTable = () =>
  new Table({
    id: vectorFromArray(
      Array.from({ length: 100 }, (_, i) => i),
      new Int32(),
    ),
    region: vectorFromArray(
      Array.from({ length: 100 }, (_, i) => ["north", "south", "east"][i % 3]),
      new Utf8(),
    ),
  });

/** Seconds of CPU the process has used so far (user and system), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

describe("SQL over the tables", () => {
  let server: TestServer;
  let admin: ReturnType<typeof client>;
  let shopViewer: ReturnType<typeof client>;
  const sql = (who: ReturnType<typeof client>, query: string, extra: Record<string, unknown> = {}, headers?: Record<string, string>) =>
    who.post<Table & Record<string, unknown>>("/v1/sql", { query, ...extra }, headers);
  const facts = (reply: Reply<Table & Record<string, unknown>>): SqlAnswerFacts => JSON.parse(reply.body.schema.metadata.get("quiver.sql")!) as SqlAnswerFacts;
  const rowsOf = (reply: Reply<Table & Record<string, unknown>>) => {
    if (reply.status !== 200)
      throw new Error(`answered ${reply.status}: ${JSON.stringify(reply.body, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))}`);
    return reply.body.toArray().map((r) => (r as { toJSON(): Record<string, unknown> }).toJSON());
  };

  beforeAll(async () => {
    server = await startServer({
      QUIVER_SQL_TIMEOUT_MS: "4000",
      QUIVER_SQL_MEMORY_BYTES: String(256 * 1024 * 1024),
      QUIVER_SQL_MAX_SCAN_BYTES: String(4 * 1024 * 1024),
      QUIVER_SQL_MAX_ROWS: "20000",
    });
    admin = client(server.url, server.auth);
    expect((await admin.post("/v1/namespace/shop/create", {})).status).toBe(200);
    expect((await admin.arrow("/v1/table/shop$orders/create", ordersTable(0, ORDERS))).status).toBe(200);
    expect((await admin.post("/v1/table/shop$orders/tags/create", { tag: "first", version: 1 })).status).toBe(200);
    expect((await admin.arrow("/v1/table/shop$orders/insert", ordersTable(ORDERS, ORDERS + 500))).status).toBe(200);
    expect((await admin.arrow("/v1/table/shop$customers/create", customersTable())).status).toBe(200);
    expect((await admin.arrow("/v1/table/secret/create", ordersTable(0, 10))).status).toBe(200);
    const key = await admin.post<{ key: string }>("/v1/admin/keys/create", { name: "shop viewer", role: "viewer", scope: { kind: "namespace", id: ["shop"] } });
    expect(key.status).toBe(200);
    shopViewer = client(server.url, { "x-api-key": key.body.key });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("answers aggregates, joins and windows with the rows the data gives", async () => {
    const all = Array.from({ length: ORDERS + 500 }, (_, i) => order(i));
    const byStatus = STATUSES.map((status) => {
      const of = all.filter((o) => o.status === status);
      return { status, n: BigInt(of.length), total: of.reduce((s, o) => s + o.amount, 0) };
    });
    const grouped = rowsOf(await sql(admin, "SELECT status, count(*) AS n, sum(amount) AS total FROM shop.orders GROUP BY status ORDER BY status"));
    expect(grouped.map((r) => r.status)).toEqual(byStatus.map((r) => r.status));
    expect(grouped.map((r) => r.n)).toEqual(byStatus.map((r) => r.n));
    grouped.forEach((r, i) => expect(r.total as number).toBeCloseTo(byStatus[i].total, 6));

    const regions = ["east", "north", "south"].map((region) => ({
      region,
      n: BigInt(all.filter((o) => ["north", "south", "east"][o.customer % 3] === region).length),
    }));
    const joined = rowsOf(
      await sql(admin, "SELECT c.region, count(*) AS n FROM shop.orders o JOIN shop.customers AS c ON o.customer = c.id GROUP BY c.region ORDER BY c.region"),
    );
    expect(joined).toEqual(regions);

    const running = rowsOf(await sql(admin, "SELECT id, sum(amount) OVER (ORDER BY id) AS running FROM shop.orders ORDER BY id LIMIT 4"));
    let sum = 0;
    expect(running.map((r) => r.id)).toEqual([0n, 1n, 2n, 3n]);
    running.forEach((r, i) => expect(r.running as number).toBeCloseTo((sum += order(i).amount), 6));

    // Numbers with and without nulls, in batches of both kinds: each value read as it is.
    const sparse = (from: number, to: number, holes: boolean) =>
      new Table({
        id: vectorFromArray(
          Array.from({ length: to - from }, (_, i) => BigInt(from + i)),
          new Int64(),
        ),
        x: vectorFromArray(
          Array.from({ length: to - from }, (_, i) => (holes && (from + i) % 3 === 0 ? null : from + i)),
          new Float64(),
        ),
      });
    expect((await admin.arrow("/v1/table/shop$sparse/create", sparse(0, 3000, false))).status).toBe(200);
    expect((await admin.arrow("/v1/table/shop$sparse/insert", sparse(3000, 6000, true))).status).toBe(200);
    const present = Array.from({ length: 6000 }, (_, i) => i).filter((i) => i < 3000 || i % 3 !== 0);
    expect(rowsOf(await sql(admin, "SELECT count(x) AS n, sum(x) AS total, count(*) AS all_rows FROM shop.sparse"))).toEqual([
      { n: BigInt(present.length), total: present.reduce((a, b) => a + b, 0), all_rows: 6000n },
    ]);

    const json = await admin.post<{ columns: Array<{ name: string }>; rows: unknown[][]; truncated: boolean }>("/v1/sql", {
      query: "SELECT status, count(*) AS n FROM shop.orders WHERE status = 'void' GROUP BY status",
      format: "json",
    });
    expect(json.status).toBe(200);
    expect(json.body.columns.map((c) => c.name)).toEqual(["status", "n"]);
    expect(json.body.rows).toEqual([["void", Number(byStatus[3].n)]]);
  });

  it("reads a version or a tag the statement names, and says which version it read", async () => {
    const at = (q: string) => sql(admin, q);
    const latest = await at("SELECT count(*) AS n FROM shop.orders");
    expect(rowsOf(latest)).toEqual([{ n: BigInt(ORDERS + 500) }]);
    expect(facts(latest).sources).toMatchObject([{ table: ["shop", "orders"], version: 2 }]);
    expect(rowsOf(await at("SELECT count(*) AS n FROM shop.orders AT (VERSION => 1)"))).toEqual([{ n: BigInt(ORDERS) }]);
    expect(rowsOf(await at("SELECT count(*) AS n FROM shop.orders o AT (VERSION => 'first') WHERE o.id >= 0"))).toEqual([{ n: BigInt(ORDERS) }]);
    // The same table at two versions in one statement: what the second version added.
    const added = await at("SELECT count(*) AS n FROM shop.orders WHERE id NOT IN (SELECT id FROM shop.orders AT (VERSION => 1))");
    expect(rowsOf(added)).toEqual([{ n: 500n }]);
    expect(
      facts(added)
        .sources.map((s) => s.version)
        .sort(),
    ).toEqual([1, 2]);
    expectError(await at("SELECT * FROM shop.orders AT (VERSION => 9)"), 404, ErrorCode.TableVersionNotFound);
    expectError(await at("SELECT * FROM shop.orders AT (VERSION => 'nope')"), 404, ErrorCode.TableTagNotFound);
    expectError(await at("SELECT * FROM shop.orders AT (TIMESTAMP => now())"), 400, ErrorCode.InvalidInput);
  });

  it("has Lance read only the columns used, and apply the filter and limit it can", async () => {
    const one = await sql(admin, "SELECT * FROM shop.orders WHERE id = 123");
    expect(rowsOf(one)).toEqual([{ ...order(123), id: 123n }]);
    expect(facts(one).sources[0]).toMatchObject({ filter: "(`id` = 123)", rows: 1, columns: ["id", "customer", "amount", "status"] });

    const ten = await sql(admin, "SELECT id FROM shop.orders WHERE status = 'paid' AND amount > 10.5 LIMIT 10");
    expect(rowsOf(ten)).toHaveLength(10);
    expect(facts(ten).sources[0]).toMatchObject({
      columns: ["id", "amount", "status"],
      filter: "(`status` = 'paid') AND (`amount` > 10.5)",
      limit: 10,
      rows: 10,
    });

    // A condition Lance is not given still holds: DuckDB applies the whole WHERE clause.
    const mixed = await sql(admin, "SELECT count(*) AS n FROM shop.orders WHERE id < 100 AND id % 2 = 0");
    expect(rowsOf(mixed)).toEqual([{ n: 50n }]);
    expect(facts(mixed).sources[0]).toMatchObject({ filter: "(`id` < 100)", limit: null, rows: 100 });

    // Over a common table expression that changes the rows, the outer WHERE and LIMIT stay DuckDB's.
    const shifted = await sql(admin, "WITH t AS (SELECT id + 1 AS id FROM shop.orders WHERE id < 10) SELECT id FROM t WHERE id = 3 LIMIT 1");
    expect(rowsOf(shifted)).toEqual([{ id: 3n }]);
    expect(facts(shifted).sources[0]).toMatchObject({ filter: null, limit: null });

    // Grouped or ordered, the limit is DuckDB's: Lance reads every row that passes the filter.
    const ordered = await sql(admin, "SELECT id FROM shop.orders ORDER BY amount DESC, id LIMIT 3");
    expect(facts(ordered).sources[0]).toMatchObject({ columns: ["id", "amount"], limit: null, rows: ORDERS + 500 });
  });

  it("has Lance run a vector or full-text search a statement reads as a table", async () => {
    const words = ["apple pie", "banana bread", "apple tart", "cherry jam", "plum cake", "apple crumble"];
    const docs = new Table({
      id: vectorFromArray(
        words.map((_, i) => i),
        new Int32(),
      ),
      body: vectorFromArray(words, new Utf8()),
      v: vectorFromArray(
        words.map((_, i) => [Math.cos(i), Math.sin(i), 0, 1]),
        new FixedSizeList(4, new Field("item", new Float32(), true)),
      ),
    });
    expect((await admin.arrow("/v1/table/shop$docs/create", docs)).status).toBe(200);
    expect((await admin.post("/v1/table/shop$docs/create_index", { column: "body", index_type: "FTS" })).status).toBe(200);
    // Nearest to (1, 0, 0, 1): by squared distance, i = 0, then 1 and 5 (cos 1 = cos 5), then 2 and 4.
    const near = await sql(shopViewer, "SELECT id, _distance FROM vector_search('shop.docs', [1, 0, 0, 1], 3) ORDER BY _distance, id");
    expect(rowsOf(near).map((r) => r.id)).toEqual([0, 1, 5]);
    expect(facts(near).sources).toMatchObject([{ table: ["shop", "docs"], search: "nearest 3 to a vector of 4", rows: 3 }]);
    const joined = await sql(
      shopViewer,
      "SELECT d.id, c.region FROM text_search('shop.docs', 'apple', 10) d JOIN shop.customers c ON c.id = d.id ORDER BY d.id",
    );
    expect(rowsOf(joined)).toEqual([
      { id: 0, region: "north" },
      { id: 2, region: "east" },
      { id: 5, region: "east" },
    ]);
    const refused = "SELECT * FROM vector_search('secret', [1, 2], 3)";
    const reply = await sql(shopViewer, refused);
    expectError(reply, 403, ErrorCode.PermissionDenied);
    expect(reply.body as unknown as { position: number }).toMatchObject({ position: refused.indexOf("vector_search") });
    expectError(await sql(admin, "SELECT * FROM vector_search('shop.docs', [1, 0, 0, 1], (SELECT 3))"), 400, ErrorCode.InvalidInput);
  });

  it("reads no table the caller may not read, however the statement names it", async () => {
    expect(rowsOf(await sql(shopViewer, "SELECT count(*) AS n FROM shop.customers"))).toEqual([{ n: 100n }]);
    const refused = [
      "SELECT * FROM secret",
      "SELECT * FROM shop.orders o JOIN secret s ON o.id = s.id",
      "SELECT (SELECT count(*) FROM secret) AS n",
      "SELECT * FROM shop.orders WHERE id IN (SELECT id FROM secret)",
      "WITH x AS (SELECT * FROM secret) SELECT * FROM x",
      "SELECT * FROM secret AT (VERSION => 1)",
      "SELECT * FROM shop.customers UNION ALL SELECT id, status FROM secret",
    ];
    for (const q of refused) {
      const reply = await sql(shopViewer, q);
      expectError(reply, 403, ErrorCode.PermissionDenied);
      expect(reply.body as unknown as { position: number }).toMatchObject({ position: q.indexOf("secret") });
    }
    // Names DuckDB would look up itself find nothing: the query's DuckDB holds only the tables it was given.
    for (const q of ["SELECT * FROM query('SELECT * FROM secret')", "SELECT * FROM query_table('secret')", "SELECT * FROM duckdb_views()"]) {
      const reply = await sql(shopViewer, q);
      if (reply.status === 200) expect(JSON.stringify(rowsOf(reply), (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toContain("secret");
      else expectError(reply, 400, ErrorCode.InvalidInput);
    }
    // A DuckDB kept from an earlier statement holds nothing of it: not the rows its functions read, nor its views.
    const earlier = "SELECT count(*) AS n FROM secret JOIN shop.orders USING (id)";
    expect(rowsOf(await sql(admin, earlier))).toEqual([{ n: 10n }]);
    await new Promise((r) => setTimeout(r, 200));
    const direct = await sql(shopViewer, "SELECT * FROM lance_table_1()");
    expectError(direct, 400, ErrorCode.InvalidInput);
    expect((direct.body as unknown as { detail: string }).detail).toMatch(/lance_table_1 reads nothing here|does not exist/);
    expect(rowsOf(await sql(admin, earlier))).toEqual([{ n: 10n }]);
    await new Promise((r) => setTimeout(r, 200));
    const left = rowsOf(
      await sql(shopViewer, "SELECT view_name AS name FROM duckdb_views() WHERE NOT internal UNION ALL SELECT schema_name FROM duckdb_schemas()"),
    );
    expect(left.map((r) => r.name)).not.toContain("secret");
    expect(left.map((r) => r.name)).not.toContain("shop");
  });

  it("refuses every way out of the tables with a clear 400, changing nothing", async () => {
    const escapes: Array<[string, RegExp]> = [
      ["SELECT * FROM read_csv('/etc/passwd')", /disabled|Permission/i],
      ["SELECT * FROM read_text('/etc/hostname')", /disabled|Permission/i],
      ["SELECT * FROM '/etc/passwd'", /not a table's name/],
      ["SELECT * FROM read_parquet('https://example.com/x.parquet')", /disabled|Permission/i],
      ["SELECT * FROM glob('/*')", /disabled|Permission/i],
      ["COPY (SELECT 1) TO '/tmp/quiver-sql-escape.csv'", /only a read/],
      ["ATTACH '/tmp/quiver-sql-escape.db' AS x", /only a read/],
      ["INSTALL httpfs", /only a read/],
      ["LOAD httpfs", /only a read/],
      ["SET memory_limit = '10GB'", /only a read/],
      ["PRAGMA version", /only a read/],
      ["CREATE TABLE t AS SELECT 1", /only a read/],
      ["SELECT 1; SELECT 2", /one statement/],
      ["SELECT current_setting('memory_limit') AS m, getenv('HOME')", /getenv/],
    ];
    for (const [q, why] of escapes) {
      const reply = await sql(admin, q);
      expectError(reply, 400, ErrorCode.InvalidInput);
      expect((reply.body as unknown as { detail: string }).detail).toMatch(why);
    }
  });

  it("refuses a field it would not honour", async () => {
    expectError(await admin.post("/v1/sql", { query: "SELECT 1", id: ["shop", "orders"] }), 400, ErrorCode.InvalidInput);
  });

  it("places an error where it is in the text", async () => {
    const q = "SELECT id,\n  nope FROM shop.orders";
    const reply = await sql(admin, q);
    expectError(reply, 400, ErrorCode.InvalidInput);
    expect(reply.body as unknown as { position: number }).toMatchObject({ position: q.indexOf("nope") });
    const versioned = "SELECT 1 FROM shop.orders AT (VERSION => 1) WHERE nope2 = 1";
    expect((await sql(admin, versioned)).body as unknown as { position: number }).toMatchObject({ position: versioned.indexOf("nope2") });
    const syntax = "SELECT * FROM shop.orders WHER id = 1";
    expect((await sql(admin, syntax)).body as unknown as { position: number }).toMatchObject({ position: syntax.indexOf("id =") });
  });

  it("answers a clear error past each cap, and keeps serving", async () => {
    const rowsCap = await sql(admin, "SELECT * FROM range(30000)");
    expectError(rowsCap, 400, ErrorCode.InvalidInput);
    expect((rowsCap.body as unknown as { detail: string }).detail).toMatch(/QUIVER_SQL_MAX_ROWS/);
    const asked = await sql(admin, "SELECT id FROM shop.orders ORDER BY id", { max_rows: 7 });
    expect((asked.body as unknown as { detail: string }).detail).toMatch(/max_rows/);
    const truncated = await sql(admin, "SELECT id FROM shop.orders ORDER BY id", { max_rows: 7, truncate: true });
    expect(rowsOf(truncated).map((r) => r.id)).toEqual([0n, 1n, 2n, 3n, 4n, 5n, 6n]);
    expect(facts(truncated).truncated).toBe(true);
    expect(truncated.headers.get("x-quiver-sql-truncated")).toBe("true");

    const memory = await sql(admin, "SELECT max(l) FROM (SELECT string_agg(range::VARCHAR, ',') AS l FROM range(40000000))");
    expectError(memory, 400, ErrorCode.InvalidInput);
    expect((memory.body as unknown as { detail: string }).detail).toMatch(/QUIVER_SQL_MEMORY_BYTES/);

    const time = await sql(admin, "SELECT count(*) FROM range(100000000) a, range(1000) b WHERE (a.range * b.range) % 7 = 1");
    expectError(time, 400, ErrorCode.InvalidInput);
    expect((time.body as unknown as { detail: string }).detail).toMatch(/QUIVER_SQL_TIMEOUT_MS/);

    expect((await admin.arrow("/v1/table/big/create", ordersTable(0, 200_000))).status).toBe(200);
    const scan = await sql(admin, "SELECT * FROM big");
    expectError(scan, 400, ErrorCode.InvalidInput);
    expect((scan.body as unknown as { detail: string }).detail).toMatch(/QUIVER_SQL_MAX_SCAN_BYTES/);
    // Fewer columns fit.
    expect(rowsOf(await sql(admin, "SELECT count(*) AS n, max(id) AS top FROM big"))).toEqual([{ n: 200_000n, top: 199_999n }]);
  });

  it("stops a query its caller abandons", async () => {
    const gone = new AbortController();
    const running = fetch(`${server.url}/v1/sql`, {
      method: "POST",
      headers: { ...server.auth, "content-type": "application/json" },
      body: JSON.stringify({ query: "SELECT count(*) FROM range(100000000) a, range(1000) b WHERE (a.range * b.range) % 7 = 1" }),
      signal: gone.signal,
    }).catch(() => null);
    await new Promise((r) => setTimeout(r, 800));
    const busy = cpuSeconds(server.pid);
    await new Promise((r) => setTimeout(r, 500));
    expect(cpuSeconds(server.pid) - busy).toBeGreaterThan(0.3);
    gone.abort();
    await running;
    await new Promise((r) => setTimeout(r, 300));
    const after = cpuSeconds(server.pid);
    await new Promise((r) => setTimeout(r, 1000));
    expect(cpuSeconds(server.pid) - after).toBeLessThan(0.2);
    expect(rowsOf(await sql(admin, "SELECT 42 AS answer"))).toEqual([{ answer: 42 }]);
  });

  it("waits its turn with the other heavy requests", async () => {
    const narrow = await startServer({ QUIVER_MAX_HEAVY_REQUESTS: "1", QUIVER_QUEUE_WAIT_MS: "300" });
    try {
      const first = new AbortController();
      const running = fetch(`${narrow.url}/v1/sql`, {
        method: "POST",
        headers: { ...narrow.auth, "content-type": "application/json" },
        body: JSON.stringify({ query: "SELECT count(*) FROM range(100000000) a, range(1000) b WHERE (a.range * b.range) % 7 = 1" }),
        signal: first.signal,
      }).catch(() => null);
      await new Promise((r) => setTimeout(r, 500));
      const second = await client(narrow.url, narrow.auth).post("/v1/sql", { query: "SELECT 1 AS one" });
      expectError(second, 503, ErrorCode.ServiceUnavailable);
      expect((second.body as { detail: string }).detail).toMatch(/busy/);
      first.abort();
      await running;
      await new Promise((r) => setTimeout(r, 300));
      expect((await client(narrow.url, narrow.auth).post("/v1/sql", { query: "SELECT 1 AS one" })).status).toBe(200);
    } finally {
      await narrow.stop();
    }
  });

  it("puts every query in the audit log, the refused and failed ones too", async () => {
    await sql(shopViewer, "SELECT * FROM secret", {}, { "x-request-id": "sql-audit-refused" });
    await sql(admin, "SELECT 7 AS seven", {}, { "x-request-id": "sql-audit-ok" });
    const log = await admin.get<{ entries: Array<Record<string, unknown>> }>("/v1/admin/audit?action=RunSql");
    expect(log.status).toBe(200);
    const byId = new Map(log.body.entries.map((e) => [e.requestId, e]));
    expect(byId.get("sql-audit-ok")).toMatchObject({ action: "RunSql", status: 200, outcome: "ok", detail: "SELECT 7 AS seven" });
    expect(byId.get("sql-audit-refused")).toMatchObject({ action: "RunSql", status: 403, outcome: "refused", detail: "SELECT * FROM secret" });
  });

  it("keeps each person's saved queries apart, and replaces or deletes one by its id", async () => {
    const saved = await admin.post<{ id: string; name: string }>("/v1/sql/saved/save", {
      name: "by status",
      sql: "SELECT status, count(*) FROM shop.orders GROUP BY 1",
    });
    expect(saved.status).toBe(200);
    await admin.post("/v1/sql/saved/save", { name: "another", sql: "SELECT 1" });
    const replaced = await admin.post("/v1/sql/saved/save", { id: saved.body.id, name: "orders by status", sql: "SELECT status FROM shop.orders" });
    expect(replaced.body).toMatchObject({ id: saved.body.id, name: "orders by status" });
    const mine = await admin.get<{ queries: Array<{ id: string; name: string; sql: string }> }>("/v1/sql/saved");
    expect(mine.body.queries.map((q) => [q.name, q.sql])).toEqual([
      ["another", "SELECT 1"],
      ["orders by status", "SELECT status FROM shop.orders"],
    ]);
    expect((await shopViewer.get<{ queries: unknown[] }>("/v1/sql/saved")).body.queries).toEqual([]);
    expectError(await shopViewer.post("/v1/sql/saved/delete", { id: saved.body.id }), 400, ErrorCode.InvalidInput);
    expectError(await shopViewer.post("/v1/sql/saved/save", { id: saved.body.id, name: "taken", sql: "SELECT 2" }), 400, ErrorCode.InvalidInput);
    expectError(await admin.post("/v1/sql/saved/delete", { id: "../../auth/keys" }), 400, ErrorCode.InvalidInput);
    expect((await admin.post("/v1/sql/saved/delete", { id: saved.body.id })).status).toBe(200);
    expect((await admin.get<{ queries: Array<{ name: string }> }>("/v1/sql/saved")).body.queries.map((q) => q.name)).toEqual(["another"]);
  });

  it("names the tables the caller may read, and DuckDB's functions, for completion", async () => {
    const words = await shopViewer.get<{ tables: string[][]; functions: Array<{ name: string; kind: string }> }>("/v1/sql/vocabulary");
    expect(words.status).toBe(200);
    expect(words.body.tables).toEqual([
      ["shop", "customers"],
      ["shop", "docs"],
      ["shop", "orders"],
      ["shop", "sparse"],
    ]);
    expect(words.body.functions).toEqual(
      expect.arrayContaining([
        { name: "avg", kind: "aggregate" },
        { name: "vector_search", kind: "table" },
        { name: "text_search", kind: "table" },
      ]),
    );
  });
});
