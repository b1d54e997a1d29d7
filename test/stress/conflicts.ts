/**
 * Two conflicting requests at once, sent through `a` and `b` (the same server, or two servers on one root). One
 * wins; the other is applied after it by the server or refused with 409 ConcurrentModification; the table is
 * left whole either way.
 */
import { Table } from "apache-arrow";
import { expect } from "vitest";
import { client, rows, type Reply } from "../client";
import type { ObjectStore } from "@/server/storage/object-store";
import { relativeTo } from "@/server/storage/root";
import { idsOf, range } from "./storm";
import { ErrorCode } from "@/lib/contract/errors";

type Api = ReturnType<typeof client>;
type Body = Record<string, unknown>;

const ROUNDS = 4;

/** The reply is a success, or the given error with the full error shape. */
function outcome(reply: Reply, allowed: Array<[number, number]>): "ok" | number {
  if (reply.status === 200) return "ok";
  const body = reply.body as Body;
  const shaped = ["type", "title", "detail", "instance", "error"].every((k) => typeof body[k] === "string") && body.status === reply.status;
  const known = allowed.some(([status, code]) => reply.status === status && body.code === code);
  if (!shaped || !known) throw new Error(`unexpected reply ${reply.status}: ${JSON.stringify(body)}`);
  return body.code as number;
}

const CONFLICT: [number, number] = [409, ErrorCode.ConcurrentModification];

/** Table names for repeated races: nested ones, whose locations are random, and root-level ones, whose are fixed. */
export const names = (nested: string, rootLevel: string, count = 10) => Array.from({ length: count }, (_, i) => [`${nested}${i}`, `${rootLevel}${i}`]).flat();

async function contents(api: Api, table: string) {
  const reply = await api.post<Table>(`/v1/table/${table}/query`, { limit: 100_000 });
  expect(reply.status).toBe(200);
  const schema = reply.body.schema.fields.map((f) => f.name);
  const data = reply.body.toArray().map((r) => JSON.stringify(Object.values(r.toJSON()), (_, v) => (typeof v === "bigint" ? Number(v) : v)));
  return { schema, data: data.sort() };
}

/** `rows(from, to)` with its columns named as given, for a table whose columns were renamed. */
function renamedRows(names: string[], from: number, to: number): Table {
  const table = rows(from, to);
  return new Table(Object.fromEntries(names.map((name, i) => [name, table.getChildAt(i)!])));
}

const rowsAsJson = (from: number, to: number) =>
  range(from, to)
    .map((i) => JSON.stringify([i, i * 1.5, `s${i}`]))
    .sort();

/** Overwrites with different rows: the table holds exactly the rows of the acknowledged overwrite with the highest version. */
export async function twoOverwrites(a: Api, b: Api, table: string) {
  const outcomes: Array<"ok" | number> = [];
  expect((await a.arrow(`/v1/table/${table}/create`, rows(0, 10))).status).toBe(200);
  for (let r = 1; r <= ROUNDS; r++) {
    const bodies = [rows(r * 1000, r * 1000 + 10), rows(r * 1000 + 500, r * 1000 + 505)];
    const replies = await Promise.all([a, b].map((api, i) => api.arrow<{ version: number }>(`/v1/table/${table}/insert?mode=overwrite`, bodies[i])));
    outcomes.push(...replies.map((reply) => outcome(reply, [CONFLICT])));
    const ok = replies.map((reply) => reply.status === 200);
    expect(ok).toContain(true);
    if (ok[0] && ok[1]) expect(replies[0].body.version).not.toBe(replies[1].body.version);
    const last = ok[0] && (!ok[1] || replies[0].body.version > replies[1].body.version) ? 0 : 1;
    const expected = last === 0 ? range(r * 1000, r * 1000 + 10) : range(r * 1000 + 500, r * 1000 + 505);
    const found = await a.post<Table>(`/v1/table/${table}/query`, { columns: ["id"], limit: 100 });
    expect(idsOf(found.body).sort((x, y) => x - y)).toEqual(expected);
    const described = await b.post(`/v1/table/${table}/describe`, {});
    expect(described.body.version).toBe(Math.max(...replies.filter((_, i) => ok[i]).map((reply) => reply.body.version)));
  }
  return outcomes;
}

/** Renames of two different columns: each lands or is refused, and the schema says which did. */
export async function twoAlterations(a: Api, b: Api, prefix: string) {
  const outcomes: Array<"ok" | number> = [];
  for (let r = 0; r < ROUNDS; r++) {
    const table = `${prefix}${r}`;
    expect((await a.arrow(`/v1/table/${table}/create`, rows(0, 10))).status).toBe(200);
    const [ra, rb] = await Promise.all([
      a.post(`/v1/table/${table}/alter_columns`, { alterations: [{ path: "x", rename: "x_a" }] }),
      b.post(`/v1/table/${table}/alter_columns`, { alterations: [{ path: "s", rename: "s_b" }] }),
    ]);
    outcomes.push(outcome(ra, [CONFLICT]), outcome(rb, [CONFLICT]));
    const [okA, okB] = [ra.status === 200, rb.status === 200];
    expect(okA || okB).toBe(true);
    const { schema, data } = await contents(b, table);
    expect(schema).toEqual(["id", okA ? "x_a" : "x", okB ? "s_b" : "s"]);
    expect(data).toEqual(rowsAsJson(0, 10));
    expect((await a.arrow(`/v1/table/${table}/insert`, renamedRows(schema, 10, 12))).status).toBe(200);
    expect((await b.post<number>(`/v1/table/${table}/count_rows`, {})).body).toBe(12);
  }
  return outcomes;
}

/** Renames of the same column: exactly one lands; the other is refused, or finds the column gone when re-run. */
export async function sameColumnAlterations(a: Api, b: Api, prefix: string) {
  const outcomes: Array<"ok" | number> = [];
  for (let r = 0; r < ROUNDS; r++) {
    const table = `${prefix}${r}`;
    expect((await a.arrow(`/v1/table/${table}/create`, rows(0, 10))).status).toBe(200);
    const replies = await Promise.all([
      a.post(`/v1/table/${table}/alter_columns`, { alterations: [{ path: "s", rename: "s_a" }] }),
      b.post(`/v1/table/${table}/alter_columns`, { alterations: [{ path: "s", rename: "s_b" }] }),
    ]);
    outcomes.push(...replies.map((reply) => outcome(reply, [CONFLICT, [404, ErrorCode.TableColumnNotFound]])));
    const ok = replies.map((reply) => reply.status === 200);
    expect(ok.filter(Boolean)).toHaveLength(1);
    const { schema, data } = await contents(b, table);
    expect(schema).toEqual(["id", "x", ok[0] ? "s_a" : "s_b"]);
    expect(data).toEqual(rowsAsJson(0, 10));
  }
  return outcomes;
}

/** Declares of one table: one succeeds, the other is told it exists (or of the conflict); one marker, one directory. */
export async function twoDeclares(a: Api, b: Api, store: ObjectStore, names: string[]) {
  for (const table of names) {
    const replies = await Promise.all([a, b].map((api) => api.post<{ location: string }>(`/v1/table/${table}/declare`, {})));
    const ok = replies.map((reply) => outcome(reply, [CONFLICT, [409, ErrorCode.TableAlreadyExists]]) === "ok");
    expect(ok.filter(Boolean)).toHaveLength(1);
    const location = replies[ok.indexOf(true)].body.location;
    const described = await b.post(`/v1/table/${table}/describe`, {});
    expect(described.body).toMatchObject({ is_only_declared: true, location });
    const key = relativeTo(store.root, location)!;
    expect(await store.head(`${key}/.lance-reserved`)).not.toBeNull();
    expect(await tableDirectories(store, table)).toEqual([key]);
    const parent = table.includes("$") ? table.slice(0, table.lastIndexOf("$")) : "$";
    const listed = await a.get<{ tables: string[] }>(`/v1/namespace/${parent}/table/list`);
    expect(listed.body.tables.filter((t) => t === table.split("$").pop())).toHaveLength(1);
  }
}

/** Creates of one table with different data: one succeeds, the other is told it exists; the table holds the winner's rows. */
export async function twoCreates(a: Api, b: Api, store: ObjectStore, names: string[]) {
  for (const table of names) {
    const replies = await Promise.all([a.arrow(`/v1/table/${table}/create`, rows(0, 10)), b.arrow(`/v1/table/${table}/create`, rows(100, 103))]);
    const ok = replies.map((reply) => outcome(reply, [CONFLICT, [409, ErrorCode.TableAlreadyExists]]) === "ok");
    expect(ok.filter(Boolean)).toHaveLength(1);
    expect((await b.post(`/v1/table/${table}/describe`, {})).body).toMatchObject({ is_only_declared: false, version: 1 });
    const found = await a.post<Table>(`/v1/table/${table}/query`, { columns: ["id"], limit: 100 });
    expect(idsOf(found.body).sort((x, y) => x - y)).toEqual(ok[0] ? range(0, 10) : range(100, 103));
    expect(await tableDirectories(store, table)).toHaveLength(1);
  }
}

/**
 * A drop sent while a large insert is under way, a little later each round: the insert lands before the drop or
 * finds no table, and afterwards nothing of the table is left, so a new table of that name starts empty.
 */
export async function dropRacingInsert(a: Api, b: Api, store: ObjectStore, names: string[]) {
  const outcomes: Array<"ok" | number> = [];
  for (const table of names) {
    for (const delay of [0, 5, 15, 30, 60, 100]) {
      const created = await a.arrow(`/v1/table/${table}/create`, rows(0, 100));
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const [inserted, dropped] = await Promise.all([
        b.arrow(`/v1/table/${table}/insert`, rows(100, 50_100)),
        new Promise((r) => setTimeout(r, delay)).then(() => a.post(`/v1/table/${table}/drop`, {})),
      ]);
      expect(outcome(dropped, [])).toBe("ok");
      outcomes.push(outcome(inserted, [CONFLICT, [404, ErrorCode.TableNotFound]]));
      // A write that came late must not have left files where the dropped table was.
      expect(await tableDirectories(store, table)).toEqual([]);
      for (const api of [a, b]) expect((await api.post(`/v1/table/${table}/describe`, {})).status).toBe(404);
      const recreated = await b.arrow<{ version: number }>(`/v1/table/${table}/create`, rows(1000, 1003));
      expect(recreated.status, JSON.stringify(recreated.body)).toBe(200);
      expect(recreated.body.version).toBe(1);
      const [directory] = await tableDirectories(store, table);
      expect((await store.list(`${directory}/_versions/`)).filter((f) => f.endsWith(".manifest"))).toHaveLength(1);
      for (const api of [a, b]) {
        const found = await api.post<Table>(`/v1/table/${table}/query`, { columns: ["id"], limit: 1000 });
        expect(idsOf(found.body).sort((x, y) => x - y)).toEqual([1000, 1001, 1002]);
      }
      expect((await a.arrow(`/v1/table/${table}/insert`, rows(1003, 1005))).body).toMatchObject({ version: 2, num_inserted_rows: 2 });
      expect((await b.post(`/v1/table/${table}/drop`, {})).status).toBe(200);
    }
  }
  return outcomes;
}

/** Directories of the data root that hold a table's data or reservation. */
async function tableDirectories(store: ObjectStore, table: string): Promise<string[]> {
  const nested = table.includes("$");
  return (await store.listDirectories("")).filter((name) => (nested ? /^[0-9a-f]{8}_/.test(name) && name.slice(9) === table : name === `${table}.lance`));
}
