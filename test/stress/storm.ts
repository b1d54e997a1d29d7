/**
 * Many writers and readers on one table at once, spread over one or more servers (a client's consecutive
 * requests go to different servers, as behind a round-robin load balancer). Records every reply so the tests can
 * check what was acknowledged against what the table holds.
 */
import type { Table } from "apache-arrow";
import { expect } from "vitest";
import { client, rows, type Reply } from "../client";

export const INSERT_CLIENTS = 16;
export const INSERTS_PER_CLIENT = 25;
export const MERGE_CLIENTS = 4;
export const MERGES_PER_CLIENT = 8;
export const READ_CLIENTS = 2;
const ROWS_PER_WRITE = 10;
/** Rows present before the storm; every merge updates some of them. */
const BASE_ROWS = 100;
const insertIds = (c: number, r: number) => 1_000_000 + c * 10_000 + r * ROWS_PER_WRITE;
/** Every merge client's r-th request inserts the same new keys, so concurrent merges race to insert each key. */
const mergeNewIds = (r: number) => 2_000_000 + r * ROWS_PER_WRITE;

type Api = ReturnType<typeof client>;
type WriteBody = { version: number; num_inserted_rows: number; num_updated_rows?: number };

export interface Write {
  client: string;
  kind: "insert" | "merge";
  /** The ids this write's body carried that the write is expected to have made visible. */
  ids: number[];
  reply: Reply<WriteBody>;
}

export interface StormResult {
  writes: Write[];
  /** Each reader's successive count_rows answers. */
  counts: number[][];
  /** Replies to reads that were not 200, and reads of the base rows that did not answer each id once. */
  badReads: string[];
  seconds: number;
}

export async function createStormTable(api: Api, table: string) {
  const [ns] = table.split("$");
  expect((await api.post(`/v1/namespace/${ns}/create`, {})).status).toBe(200);
  const created = await api.arrow(
    `/v1/table/${table}/create`,
    rows(0, BASE_ROWS, () => 0),
  );
  expect(created.status).toBe(200);
}

export async function runStorm(apis: Api[], table: string): Promise<StormResult> {
  const started = Date.now();
  const writes: Write[] = [];
  const badReads: string[] = [];
  const pick = (n: number) => apis[n % apis.length];
  let writing = true;

  const inserter = async (c: number) => {
    for (let r = 0; r < INSERTS_PER_CLIENT; r++) {
      const from = insertIds(c, r);
      const reply = await pick(c + r).arrow<WriteBody>(`/v1/table/${table}/insert`, rows(from, from + ROWS_PER_WRITE));
      writes.push({ client: `insert-${c}`, kind: "insert", ids: range(from, from + ROWS_PER_WRITE), reply });
    }
  };
  const merger = async (m: number) => {
    for (let r = 0; r < MERGES_PER_CLIENT; r++) {
      const from = mergeNewIds(r);
      const marker = 1 + m * 1000 + r;
      const body = rows(BASE_ROWS - 20, BASE_ROWS, () => marker).concat(rows(from, from + ROWS_PER_WRITE, () => marker));
      const reply = await pick(m + r).arrow<WriteBody>(
        `/v1/table/${table}/merge_insert?on=id&when_matched_update_all=true&when_not_matched_insert_all=true`,
        body as Table,
      );
      writes.push({ client: `merge-${m}`, kind: "merge", ids: range(from, from + ROWS_PER_WRITE), reply });
    }
  };
  const counts: number[][] = [];
  const reader = async (n: number) => {
    const seen: number[] = [];
    counts.push(seen);
    for (let i = 0; writing; i++) {
      const api = pick(n + i);
      const counted = await api.post<number>(`/v1/table/${table}/count_rows`, {});
      if (counted.status !== 200) badReads.push(`count_rows: ${counted.status} ${JSON.stringify(counted.body)}`);
      else seen.push(counted.body);
      const base = await api.post<Table>(`/v1/table/${table}/query`, { filter: `id < ${BASE_ROWS}`, columns: ["id"], limit: 10_000 });
      if (base.status !== 200) badReads.push(`query: ${base.status} ${JSON.stringify(base.body)}`);
      else {
        const ids = idsOf(base.body);
        if (ids.length !== BASE_ROWS || new Set(ids).size !== BASE_ROWS)
          badReads.push(`query of the base rows answered ${ids.length} ids, ${new Set(ids).size} distinct`);
      }
    }
  };

  const writers = Promise.all([
    ...Array.from({ length: INSERT_CLIENTS }, (_, c) => inserter(c)),
    ...Array.from({ length: MERGE_CLIENTS }, (_, m) => merger(m)),
  ]);
  const readers = Promise.all(Array.from({ length: READ_CLIENTS }, (_, n) => reader(n)));
  await writers.finally(() => (writing = false));
  await readers;
  return { writes, counts, badReads, seconds: (Date.now() - started) / 1000 };
}

/** The assertions of the storm: acknowledged rows are there once, versions are honest and increase. */
export async function checkStorm(api: Api, table: string, result: StormResult) {
  const { writes } = result;
  const failed = writes.filter((w) => w.reply.status !== 200).map((w) => `${w.client}: ${w.reply.status} ${JSON.stringify(w.reply.body)}`);
  expect(failed).toEqual([]);
  expect(writes).toHaveLength(INSERT_CLIENTS * INSERTS_PER_CLIENT + MERGE_CLIENTS * MERGES_PER_CLIENT);
  expect(result.badReads).toEqual([]);

  // Every acknowledged row is there, and no row twice.
  const expected = new Set<number>(range(0, BASE_ROWS));
  for (const w of writes) w.ids.forEach((id) => expected.add(id));
  const all = await api.post<Table>(`/v1/table/${table}/query`, { columns: ["id"], limit: 100_000 });
  expect(all.status).toBe(200);
  const ids = idsOf(all.body);
  const seen = new Set<number>();
  const twice = ids.filter((id) => (seen.has(id) ? true : (seen.add(id), false)));
  expect(twice).toEqual([]);
  expect(ids.length).toBe(expected.size);
  expect([...expected].filter((id) => !seen.has(id))).toEqual([]);
  expect((await api.post<number>(`/v1/table/${table}/count_rows`, {})).body).toBe(expected.size);

  // Merges inserted each shared new key exactly once between them, and updated the rest.
  const merges = writes.filter((w) => w.kind === "merge");
  expect(merges.reduce((n, w) => n + w.reply.body.num_inserted_rows, 0)).toBe(MERGES_PER_CLIENT * ROWS_PER_WRITE);
  for (const w of merges) expect(w.reply.body.num_inserted_rows + w.reply.body.num_updated_rows!).toBe(30);

  // Per client, the versions its responses report strictly increase. Two writes share a version only as appends
  // committed together (group commit); below, each write's rows are shown to appear first at its version.
  const byClient = new Map<string, number[]>();
  for (const w of writes) byClient.set(w.client, [...(byClient.get(w.client) ?? []), w.reply.body.version]);
  for (const [name, versions] of byClient) {
    const backwards = versions.filter((v, i) => i > 0 && v <= versions[i - 1]);
    expect(backwards, `${name} reported versions ${versions.join(", ")}`).toEqual([]);
  }
  const versions = writes.map((w) => w.reply.body.version);
  const claimed = new Map<number, typeof writes>();
  for (const w of writes) claimed.set(w.reply.body.version, [...(claimed.get(w.reply.body.version) ?? []), w]);
  const sharedWithMerge = [...claimed].filter(([, who]) => who.length > 1 && who.some((w) => w.kind === "merge"));
  expect(sharedWithMerge.map(([v, who]) => `v${v}: ${who.map((w) => w.client).join(", ")}`)).toEqual([]);

  // Each response's version exists and holds that write's rows; the version list has them all.
  const listed = new Set<number>();
  let token: string | undefined;
  do {
    const page = await api.post<{ versions: Array<{ version: number }>; page_token?: string }>(
      `/v1/table/${table}/version/list?limit=1000${token ? `&page_token=${encodeURIComponent(token)}` : ""}`,
    );
    expect(page.status).toBe(200);
    page.body.versions.forEach((v) => listed.add(v.version));
    token = page.body.page_token;
  } while (token);
  expect(versions.filter((v) => !listed.has(v))).toEqual([]);
  const missing: string[] = [];
  // Each look opens an older version: on an object store that is a few reads, so they go eight at a time.
  await inParallel(writes, 8, async (w) => {
    const predicate = `id >= ${w.ids[0]} AND id <= ${w.ids[w.ids.length - 1]}`;
    const at = await api.post<number>(`/v1/table/${table}/count_rows`, { predicate, version: w.reply.body.version });
    if (at.status !== 200 || at.body !== w.ids.length) missing.push(`${w.client} v${w.reply.body.version}: ${at.status} ${JSON.stringify(at.body)}`);
    if (w.kind === "merge") return;
    const before = await api.post<number>(`/v1/table/${table}/count_rows`, { predicate, version: w.reply.body.version - 1 });
    if (before.status !== 200 || before.body !== 0)
      missing.push(`${w.client}: rows already at v${w.reply.body.version - 1}: ${before.status} ${JSON.stringify(before.body)}`);
  });
  expect(missing).toEqual([]);

  // Readers never saw the table shrink.
  for (const seen of result.counts) {
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((n, i) => n < BASE_ROWS || (i > 0 && n < seen[i - 1]))).toEqual([]);
  }
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, k) => from + k);
}

export function idsOf(table: Table): number[] {
  return [...table.getChild("id")!.toArray()].map(Number);
}

export async function inParallel<T>(items: T[], width: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

/**
 * Many clients declaring and creating tables at once, each then reading its table back through another server
 * (when there are several): every table is catalogued once, and every server lists them all.
 */
export async function catalogStorm(apis: Api[], namespace: string, clients = 8, perClient = 25) {
  expect((await apis[0].post(`/v1/namespace/${namespace}/create`, {})).status).toBe(200);
  const failures: string[] = [];
  const names: string[] = [];
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let r = 0; r < perClient; r++) {
        const name = `t${c}_${r}`;
        const table = `${namespace}$${name}`;
        const writer = apis[(c + r) % apis.length];
        const reader = apis[(c + r + 1) % apis.length];
        const declare = r % 3 !== 2;
        const reply = declare ? await writer.post(`/v1/table/${table}/declare`, {}) : await writer.arrow(`/v1/table/${table}/create`, rows(r, r + 2));
        if (reply.status !== 200) failures.push(`${declare ? "declare" : "create"} ${table}: ${reply.status} ${JSON.stringify(reply.body)}`);
        names.push(name);
        const described = await reader.post(`/v1/table/${table}/describe`, {});
        if (described.status !== 200 || described.body.is_only_declared !== declare)
          failures.push(`describe ${table}: ${described.status} ${JSON.stringify(described.body)}`);
      }
    }),
  );
  expect(failures).toEqual([]);
  for (const api of apis) {
    const listed = await api.get<{ tables: string[] }>(`/v1/namespace/${namespace}/table/list`);
    expect(listed.status).toBe(200);
    expect(listed.body.tables).toEqual([...names].sort());
    const created = await api.get<{ tables: string[] }>(`/v1/namespace/${namespace}/table/list?include_declared=false`);
    expect(created.body.tables.length).toBe(names.filter((n) => Number(n.split("_")[1]) % 3 === 2).length);
  }
}
