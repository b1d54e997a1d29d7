/**
 * SQL over the tables of a database, read-only, run by DuckDB in this process. A statement runs in a DuckDB that,
 * while it runs, holds nothing but views of the tables it names and the caller may read (query-database.ts), each
 * over a table function that hands DuckDB the rows Lance read: the columns DuckDB's plan uses (projection pushdown),
 * after the filter and limit Lance can apply itself (statement.ts). That DuckDB reaches no file, URL or extension,
 * cannot change its settings, and is bounded in memory, threads and time; the rows Lance reads for it are bounded in
 * bytes.
 */
import "server-only";
import * as arrow from "apache-arrow";
import { DuckDBInstance, type DuckDBConnection, type DuckDBResultReader } from "@duckdb/node-api";
import { IdentifierError, validateIdentifier } from "@/lib/identifiers";
import { config } from "@/server/config";
import { QuiverError, invalidInput } from "@/server/errors";
import { engineCall, type NativeTable } from "@/server/lance/native";
import type { Id, ReadAt } from "@/server/catalog/catalog";
import { queryHandle } from "@/server/tables/queries";
import type { Tables } from "@/server/tables/tables";
import { answerColumn, feedOf, type ColumnFeed } from "./columns";
import { SAFE_SETTINGS, giveBack, quoteIdent, tableFunction, takeDatabase, type Rows, type TableRows } from "./query-database";
import {
  SEARCH_FUNCTIONS,
  StatementError,
  nameEnd,
  pushdownOf,
  searchCalls,
  searchKey,
  selectOf,
  tableReferences,
  type SearchCall,
  type TableReference,
} from "./statement";

export interface SqlRequest {
  sql: string;
  /** Rows to answer at most (the service's cap when larger). */
  maxRows: number;
  /** Past `maxRows`, answer the first rows marked truncated instead of failing. */
  truncate: boolean;
  /** Whether the caller may read a table; a table it may not is refused as if it were not there to read. */
  canRead: (id: Id) => Promise<boolean>;
  /** Aborted when the caller goes away: the query stops. */
  signal: AbortSignal;
}

export interface SqlSourceRead {
  table: Id;
  version: number;
  /** The columns Lance read, the filter and limit it applied, and the rows it handed over. */
  columns: string[];
  filter: string | null;
  limit: number | null;
  rows: number;
  /** For a vector_search or text_search: the search Lance ran. */
  search?: string;
}

export interface SqlAnswer {
  table: arrow.Table;
  truncated: boolean;
  sources: SqlSourceRead[];
  /** Milliseconds spent: parsing the statement and opening its tables; making its DuckDB and plan; reading the tables; running it. */
  openMs: number;
  planMs: number;
  readMs: number;
  runMs: number;
}

/** Rows Lance read for the statement, and what it read. */
interface ReadRows extends Rows {
  read: SqlSourceRead;
}

/** One table, at one version, as the statement reads it (every mention of it at that version shares one). */
interface Source extends ReadRows, TableRows {
  refs: TableReference[];
  handle: NativeTable;
  version: number;
  /** The table function that reads it (query-database.ts), as DuckDB's plan names it. */
  functionName: string;
}

const MiB = 1024 * 1024;

let parser: Promise<{ connection: DuckDBConnection; aggregates: Set<string> }> | null = null;

/** A DuckDB with no data, for parsing statements and knowing its functions. */
function parserInstance() {
  parser ??= (async () => {
    const instance = await DuckDBInstance.create(":memory:", { ...SAFE_SETTINGS, threads: "1", memory_limit: "64MB" });
    const connection = await instance.connect();
    const rows = (await connection.runAndReadAll("SELECT DISTINCT lower(function_name) FROM duckdb_functions() WHERE function_type = 'aggregate'")).getRows();
    return { connection, aggregates: new Set(rows.map((r) => String(r[0]))) };
  })();
  return parser;
}

/** The functions DuckDB offers a statement, for completion in the console: name and kind. */
export async function sqlFunctions(): Promise<Array<{ name: string; kind: string }>> {
  const { connection } = await parserInstance();
  const rows = (
    await connection.runAndReadAll(
      "SELECT DISTINCT function_name, function_type FROM duckdb_functions() WHERE function_type IN ('scalar', 'aggregate', 'table') AND NOT starts_with(function_name, '_') ORDER BY 1",
    )
  ).getRows();
  return [...SEARCH_FUNCTIONS.map((name) => ({ name, kind: "table" })), ...rows.map((r) => ({ name: String(r[0]), kind: String(r[1]) }))];
}

/** The statement's error as a QuiverError, with where in the text it is. */
function statementError(err: unknown, sql: string, ran: string, moved: Array<{ at: number; by: number }>): QuiverError {
  if (err instanceof QuiverError) return err;
  if (err instanceof StatementError) return new QuiverError("InvalidInput", err.message, { position: err.position ?? undefined });
  const message = err instanceof Error ? err.message : String(err);
  if (/Out of Memory/i.test(message))
    return invalidInput(
      `the query needs more than the ${Math.round(config.sqlMemoryBytes / MiB)} MiB a query may use (QUIVER_SQL_MEMORY_BYTES): ${firstLine(message)}`,
    );
  if (/INTERRUPT/i.test(message)) return invalidInput("the query was stopped");
  const position = positionOf(message, sql, ran, moved);
  return new QuiverError("InvalidInput", message.replace(/\n\nLINE \d+:[\s\S]*$/, "").trim(), { position: position ?? undefined });
}

const firstLine = (s: string) => s.split("\n")[0];

/**
 * Where DuckDB's "LINE n: …excerpt…" and its caret point, in the caller's text: the excerpt is of the text DuckDB ran,
 * whose rewritten names (`moved`) shifted what follows them.
 */
function positionOf(message: string, sql: string, ran: string, moved: Array<{ at: number; by: number }>): number | null {
  const m = /LINE (\d+): (.*)\n( *)\^/.exec(message);
  if (!m) return null;
  const [, lineNo, excerpt, pad] = m;
  const caret = pad.length - `LINE ${lineNo}: `.length;
  const lines = ran.split("\n");
  const line = lines[Number(lineNo) - 1];
  if (line === undefined) return null;
  const clipped = excerpt.startsWith("...") ? excerpt.slice(3) : excerpt;
  const lead = excerpt.length - clipped.length;
  const found = line.indexOf(clipped.endsWith("...") ? clipped.slice(0, -3) : clipped);
  if (found < 0) return null;
  let at = lines.slice(0, Number(lineNo) - 1).reduce((n, l) => n + l.length + 1, 0) + found + caret - lead;
  for (const move of moved) if (move.at < at) at -= move.by;
  return Math.max(0, Math.min(sql.length, at));
}

/** The names a reference is known by in its statement, for the columns its conjuncts qualify. */
const namesOf = (ref: TableReference) => (ref.alias ? [ref.alias] : [ref.parts[ref.parts.length - 1], ref.parts.join(".")]);

export async function runSql(tables: Tables, request: SqlRequest): Promise<SqlAnswer> {
  const { sql } = request;
  const edits: Array<{ start: number; end: number; text: string }> = [];
  const moved: Array<{ at: number; by: number }> = [];
  // The text DuckDB runs: the caller's, with its `AT` references renamed.
  let text = sql;
  const started = performance.now();
  const deadline = Date.now() + config.sqlTimeoutMs;
  const stopped = () => {
    if (request.signal.aborted) throw invalidInput("the query was cancelled");
    if (Date.now() > deadline) throw ranTooLong();
  };
  try {
    const { connection: parsing, aggregates } = await parserInstance();
    const serialized = (await parsing.runAndReadAll("SELECT json_serialize_sql($1::VARCHAR)", [sql])).getRows()[0][0];
    const select = selectOf(String(serialized));
    const refs = tableReferences(sql, select);

    // Each table once per version: every name checked in the order the text gives them, then all opened and
    // described at once, before anything runs.
    const named = new Map<string, TableReference[]>();
    for (const ref of refs) {
      const key = JSON.stringify([ref.parts, ref.at ?? {}]);
      const known = named.get(key);
      if (known) known.push(ref);
      else {
        await mayRead(request, ref.parts, ref.location);
        named.set(key, [ref]);
      }
    }
    const opened = await Promise.all(
      [...named.values()].map((same, n) =>
        openSource(tables, same, n + 1).catch((err: unknown) => {
          if (err instanceof QuiverError) throw new QuiverError(err.codeName, err.message, { position: same[0].location });
          throw err;
        }),
      ),
    );
    const sources = new Map([...named.keys()].map((key, n) => [key, opened[n]]));
    const searches = await runSearches(tables, request, searchCalls(select));
    // References at a version read a view of their own; the text names it in their place, padded to keep positions.
    for (const source of sources.values()) {
      if (!source.refs[0].at) continue;
      for (const ref of source.refs) renameAt(sql, ref, source.view, edits);
    }
    text = applyEdits(sql, edits, moved);

    const openMs = performance.now() - started;
    const db = await takeDatabase();
    const connection = await db.connect();
    const onAbort = () => connection.interrupt();
    request.signal.addEventListener("abort", onAbort);
    const timer = setTimeout(onAbort, Math.max(0, deadline - Date.now()));
    let ended = false;
    try {
      let n = 0;
      for (const source of sources.values()) await db.define(connection, ++n, source);
      db.useSearches(searches);
      // Prepared first, so that an error in the statement is reported on its own text rather than within the EXPLAIN.
      const prepared = await connection.prepare(text);
      const plan = (await connection.runAndReadAll(`EXPLAIN (FORMAT JSON) ${text}`)).getRows()[0][1];
      const projections = projectionsOf(String(plan));
      const readStart = performance.now();
      const planMs = readStart - started - openMs;
      for (const source of sources.values()) {
        const used = projections.get(source.functionName.toUpperCase());
        const columns = used ? source.feeds.filter((f) => used.has(f.name)) : source.feeds;
        const only = source.refs.length === 1 ? source.refs[0] : null;
        const columnKinds = new Map(source.feeds.map((f) => [f.name.toLowerCase(), { name: f.name, kind: f.kind }]));
        const pushed = only && sources.size === 1 ? pushdownOf(select, only, namesOf(only), columnKinds, aggregates) : { filter: null, limit: null };
        await load(source, columns.length ? columns : source.feeds.slice(0, 1), pushed, stopped);
      }
      const readMs = performance.now() - readStart;
      stopped();
      const runStart = performance.now();
      const cap = Math.min(request.maxRows, config.sqlMaxRows);
      const reader = await prepared.streamAndReadUntil(cap + 1);
      const truncated = reader.currentRowCount > cap;
      if (truncated && !request.truncate)
        throw invalidInput(
          `the query answers more than ${cap} rows (${cap === config.sqlMaxRows ? "QUIVER_SQL_MAX_ROWS" : "max_rows"}): add a LIMIT, or ask for the first rows with truncate`,
        );
      const table = answerTable(reader, cap);
      const reads = [...sources.values(), ...searches.values()].map((s) => s.read);
      ended = true;
      return { table, truncated, sources: reads, openMs, planMs, readMs, runMs: performance.now() - runStart };
    } finally {
      clearTimeout(timer);
      request.signal.removeEventListener("abort", onAbort);
      connection.closeSync();
      giveBack(db, ended);
    }
  } catch (err) {
    if (err instanceof Error && /INTERRUPT/i.test(err.message)) {
      if (request.signal.aborted) throw invalidInput("the query was cancelled");
      throw ranTooLong();
    }
    throw statementError(err, sql, text, moved);
  }
}

const ranTooLong = () =>
  invalidInput(`the query ran past the ${Math.round(config.sqlTimeoutMs / 1000)} s a query may take (QUIVER_SQL_TIMEOUT_MS) and was stopped`);

/** A table the statement names, at the version its references ask for, through one handle fixed at that version. */
async function openSource(tables: Tables, refs: TableReference[], n: number): Promise<Source> {
  const ref = refs[0];
  const at: ReadAt = ref.at ?? {};
  // The catalog's look runs beside the table's own (see Catalog.resolveWith).
  const { value: handle } = await tables.resolveWith(ref.parts, (entry) => tables.fixedHandle(entry, "be queried", at));
  const [schemaIpc, version] = await engineCall("read the table's schema", () => Promise.all([handle.schema(), handle.version()]));
  const schema = arrow.tableFromIPC(schemaIpc).schema;
  const feeds = schema.fields.map(feedOf);
  const name = ref.parts[ref.parts.length - 1];
  const view = ref.at ? [`${name}@${"version" in ref.at ? ref.at.version : ref.at.tag}`] : ref.parts;
  return {
    id: ref.parts,
    refs,
    handle,
    version,
    feeds,
    functionName: tableFunction(n),
    view,
    read: { table: ref.parts, version, columns: [], filter: null, limit: null, rows: 0 },
    batches: [],
  };
}

/** Puts the view's name in place of a reference with an `AT` clause, and blanks the clause. */
function renameAt(sql: string, ref: TableReference, view: string[], edits: Array<{ start: number; end: number; text: string }>) {
  const span = ref.atSpan!;
  const end = nameEnd(sql, ref.location);
  const name = view.map(quoteIdent).join(".");
  if (!ref.alias && sql.slice(end, span.start).trim() === "") {
    // No alias: the view takes the table's own name as its alias, so that `t.col` still reads.
    edits.push({ start: ref.location, end: span.end, text: `${name} AS ${quoteIdent(ref.parts[ref.parts.length - 1])}` });
  } else {
    edits.push({ start: ref.location, end, text: name }, { start: span.start, end: span.end, text: "" });
  }
}

/** The text with its edits made, each padded with spaces to the length it replaces where it fits, so positions hold. */
function applyEdits(sql: string, edits: Array<{ start: number; end: number; text: string }>, moved: Array<{ at: number; by: number }>): string {
  let out = "";
  let from = 0;
  for (const e of [...edits].sort((a, b) => a.start - b.start)) {
    const length = e.end - e.start;
    const text = e.text.length < length ? e.text.padEnd(length) : e.text;
    if (text.length !== length) moved.push({ at: out.length + (e.start - from) + text.length, by: text.length - length });
    out += sql.slice(from, e.start) + text;
    from = e.end;
  }
  return out + sql.slice(from);
}

/** Refuses a table that is not a table's name, or that the caller may not read, pointing at where the text names it. */
async function mayRead(request: SqlRequest, parts: string[], position: number) {
  try {
    validateIdentifier(parts);
  } catch (err) {
    if (err instanceof IdentifierError) throw new QuiverError("InvalidInput", `'${parts.join(".")}' is not a table's name: ${err.message}`, { position });
    throw err;
  }
  if (!(await request.canRead(parts))) throw new QuiverError("PermissionDenied", `the caller may not read table '${parts.join(".")}'`, { position });
}

interface Search extends ReadRows {
  call: SearchCall;
}

/** Runs each search the statement calls, once, before DuckDB binds it: the rows Lance's index finds, with their distance or score. */
async function runSearches(tables: Tables, request: SqlRequest, calls: SearchCall[]): Promise<Map<string, Search>> {
  const found = new Map<string, Search>();
  for (const call of calls) {
    const key = searchKey(call.kind, call.table, call.vector ?? call.text ?? "", call.k, call.vectorColumn, call.distanceType);
    if (found.has(key)) continue;
    await mayRead(request, call.parts, call.location);
    const limit = Math.min(call.k, config.sqlMaxRows);
    const placed = (err: unknown): never => {
      if (err instanceof QuiverError) throw new QuiverError(err.codeName, err.message, { position: call.location });
      throw err;
    };
    const { value: handle } = await tables.resolveWith(call.parts, (entry) => tables.fixedHandle(entry, "be searched", {})).catch(placed);
    const ipc = await queryHandle(
      handle,
      call.vector
        ? { vector: call.vector, vectorColumn: call.vectorColumn ?? undefined, distanceType: call.distanceType ?? undefined, limit }
        : { fullText: { query: call.text ?? "" }, limit },
    ).catch(placed);
    const rows = arrow.tableFromIPC(ipc);
    const version = await engineCall("read the table's version", () => handle.version());
    const search = call.vector ? `nearest ${limit} to a vector of ${call.vector.length}` : `${limit} best matches of '${call.text}'`;
    found.set(key, {
      call,
      id: call.parts,
      feeds: rows.schema.fields.map(feedOf),
      batches: rows.batches,
      read: { table: call.parts, version, columns: rows.schema.fields.map((f) => f.name), filter: null, limit, rows: rows.numRows, search },
    });
  }
  return found;
}

/** The columns each of the query's table functions reads, from DuckDB's plan. */
function projectionsOf(plan: string): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const visit = (node: { children?: unknown[]; extra_info?: Record<string, unknown> }) => {
    const fn = node.extra_info?.Function;
    if (typeof fn === "string") {
      const p = node.extra_info?.Projections;
      const names = Array.isArray(p) ? p.map(String) : typeof p === "string" ? [p] : [];
      const set = found.get(fn) ?? new Set<string>();
      names.forEach((n) => set.add(n));
      found.set(fn, set);
    }
    for (const c of node.children ?? []) visit(c as typeof node);
  };
  for (const root of JSON.parse(plan) as unknown[]) visit(root as { children?: unknown[] });
  return found;
}

/** Reads what the query needs of a table from Lance, within the bytes a query may read. */
async function load(source: Source, columns: ColumnFeed[], pushed: { filter: string | null; limit: number | null }, stopped: () => void) {
  const query = source.handle.query();
  query.selectColumns(columns.map((c) => c.name));
  if (pushed.filter) query.onlyIf(pushed.filter);
  if (pushed.limit !== null) query.limit(pushed.limit);
  source.read.columns = columns.map((c) => c.name);
  source.read.filter = pushed.filter;
  source.read.limit = pushed.limit;
  let bytes = 0;
  await engineCall(`read table '${source.id.join(".")}'`, async () => {
    const iterator = await query.execute();
    for (let buf = await iterator.next(); buf; buf = await iterator.next()) {
      stopped();
      bytes += buf.byteLength;
      if (bytes > config.sqlMaxScanBytes)
        throw invalidInput(
          `the query reads more than the ${Math.round(config.sqlMaxScanBytes / MiB)} MiB of table data a query may read (QUIVER_SQL_MAX_SCAN_BYTES) from '${source.id.join(".")}': name fewer columns or filter the rows`,
        );
      for (const batch of arrow.tableFromIPC(buf).batches) {
        source.batches.push(batch);
        source.read.rows += batch.numRows;
      }
    }
  });
}

function answerTable(reader: DuckDBResultReader, cap: number): arrow.Table {
  const names = reader.columnNames();
  const types = reader.columnTypes();
  const columns = reader.getColumns();
  const vectors: Record<string, arrow.Vector> = {};
  names.forEach((name, i) => {
    // Two result columns of one name (`SELECT a.id, b.id`): the second is told apart, as DuckDB's own clients do.
    let unique = name;
    for (let k = 1; unique in vectors; k++) unique = `${name}_${k}`;
    vectors[unique] = answerColumn(types[i], columns[i].slice(0, cap));
  });
  return new arrow.Table(vectors);
}
