/**
 * Large Arrow bodies are read into buffers that later bodies reuse (server/http/body-buffers.ts). Each write must
 * commit exactly its own rows: a buffer given back while the engine still reads it would hand one request's rows
 * to another's table.
 */
import { tableToIPC } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, rows } from "./client";
import { startServer, type TestServer } from "./server";

let server: TestServer;
let api: ReturnType<typeof client>;

/** About 9 MB of Arrow stream: more than the size below which waiting appends are joined (copied) into one. */
const ROWS = 300_000;

beforeAll(async () => {
  server = await startServer();
  api = client(server.url, server.auth);
});
afterAll(() => server?.stop());

/** The table holds exactly the ids in [from, to), each once, with its own `x`. */
async function holdsExactly(table: string, from: number, to: number) {
  const count = (where: string) => api.post(`/v1/table/${table}/count_rows`, { predicate: where }).then((r) => r.body);
  expect(await count("true"), table).toBe(to - from);
  expect(await count(`id >= ${from} AND id < ${to} AND x = id * 1.5`), table).toBe(to - from);
}

describe("large bodies in reused buffers", () => {
  it("commit each request's own rows, whether sent together or one after another", async () => {
    // Every body is made first: a pause of some seconds between requests (building them) lets a kept-alive
    // connection reach the server's idle timeout just as the client writes into it.
    const ranges = [1, 2, 3, 4, 5, 6, 7, 8].map((i) => [i * 10 * ROWS, i * 10 * ROWS + ROWS]);
    const bodies = ranges.map(([from, to]) => tableToIPC(rows(from, to), "stream"));
    const big = tableToIPC(rows(0, 2 * ROWS), "stream");
    const smaller = tableToIPC(rows(5 * ROWS, 6 * ROWS), "stream");
    const firsts = [0, 1, 2, 3].map((i) => tableToIPC(rows(i * 10 * ROWS, i * 10 * ROWS + ROWS), "stream"));
    const tables = ["l0", "l1", "l2", "l3"];
    for (const t of tables) expect((await api.arrow(`/v1/table/${t}/create`, rows(0, 1))).status).toBe(200);
    const deletes = await Promise.all(tables.map((t) => api.post(`/v1/table/${t}/delete`, { predicate: "true" })));
    expect(deletes.map((d) => d.status)).toEqual([200, 200, 200, 200]);

    // Together: each body is read while others are still being written by the engine.
    const together = await Promise.all(tables.map((t, i) => api.arrow(`/v1/table/${t}/insert`, firsts[i])));
    expect(together.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    for (const [i, t] of tables.entries()) await holdsExactly(t, i * 10 * ROWS, i * 10 * ROWS + ROWS);

    // Into one table, whose writes take turns: bodies that wait for their turn hold their buffers while later
    // bodies arrive. A buffer given back before its write ended would take in a later body under the engine.
    expect((await api.arrow("/v1/table/one/create", rows(0, 1))).status).toBe(200);
    const inTurns = await Promise.all(
      bodies.map(async (body, i) => {
        if (i >= 4) await new Promise((r) => setTimeout(r, 100));
        return api.arrow("/v1/table/one/insert", body);
      }),
    );
    expect(inTurns.map((r) => r.status)).toEqual(bodies.map(() => 200));
    const count = (where: string) => api.post("/v1/table/one/count_rows", { predicate: where }).then((r) => r.body);
    expect(await count("true")).toBe(ranges.length * ROWS + 1);
    for (const [from, to] of ranges) expect(await count(`id >= ${from} AND id < ${to} AND x = id * 1.5`)).toBe(ROWS);

    // One after another, smaller after larger: the smaller body lands in the larger one's buffer.
    expect((await api.arrow("/v1/table/big/create", big)).status).toBe(200);
    expect((await api.arrow("/v1/table/smaller/create", smaller)).status).toBe(200);
    await holdsExactly("big", 0, 2 * ROWS);
    await holdsExactly("smaller", 5 * ROWS, 6 * ROWS);
  });
});
