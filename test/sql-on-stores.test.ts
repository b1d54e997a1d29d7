/**
 * SQL over a root on a local directory and (in the Azurite run) on an object store: a join, an aggregate, a version
 * and a filtered read answer the rows written, whatever holds the tables.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Table } from "apache-arrow";
import { client, rows } from "./client";
import { startServer, type TestServer } from "./server";

describe("SQL on the root's store", () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  const sql = async (query: string) => {
    const reply = await api.post<Table>("/v1/sql", { query });
    if (reply.status !== 200) throw new Error(`${query}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body.toArray().map((r) => (r as { toJSON(): Record<string, unknown> }).toJSON());
  };

  beforeAll(async () => {
    server = await startServer();
    api = client(server.url, server.auth);
    expect((await api.post("/v1/namespace/lake/create", {})).status).toBe(200);
    expect((await api.arrow("/v1/table/lake$a/create", rows(0, 300))).status).toBe(200);
    expect((await api.arrow("/v1/table/lake$a/insert", rows(300, 400))).status).toBe(200);
    expect(
      (
        await api.arrow(
          "/v1/table/lake$b/create",
          rows(100, 200, (i) => i * 2),
        )
      ).status,
    ).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("joins, aggregates, reads a version and filters", async () => {
    expect(await sql("SELECT count(*) AS n, sum(a.x + b.x) AS total FROM lake.a a JOIN lake.b b ON a.id = b.id")).toEqual([
      { n: 100n, total: Array.from({ length: 100 }, (_, k) => (100 + k) * 1.5 + (100 + k) * 2).reduce((s, v) => s + v, 0) },
    ]);
    expect(await sql("SELECT count(*) AS n FROM lake.a AT (VERSION => 1)")).toEqual([{ n: 300n }]);
    expect(await sql("SELECT count(*) AS n FROM lake.a")).toEqual([{ n: 400n }]);
    expect(await sql("SELECT id, s FROM lake.a WHERE id = 342")).toEqual([{ id: 342n, s: "s342" }]);
  });
});
