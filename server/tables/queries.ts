/** Reads of one table: count, query (vector, full-text, filters, projections, orderings) and its plans. */
import "server-only";
import type { FullTextQuery } from "@lancedb/lancedb";
import { QuiverError, invalidInput } from "@/server/errors";
import { joinIpcFiles } from "@/server/lance/arrow-ipc";
import { engineCall } from "@/server/lance/native";
import type { Id, ReadAt } from "@/server/catalog/catalog";
import type { NativeTable, NativeVectorQuery } from "@/server/lance/native";
import type { Tables } from "./tables";

export async function countRows(tables: Tables, id: Id, predicate: string | undefined, at: ReadAt): Promise<number> {
  const { value } = await tables.resolveWith(id, async (entry) => {
    let table: NativeTable;
    try {
      table = await tables.readHandle(entry, at);
    } catch (err) {
      if (!(await tables.isDeclaredOnly(entry))) throw err;
      if (at.version !== undefined || at.tag !== undefined) throw new QuiverError("TableVersionNotFound", `Table '${entry.objectId}' has no versions yet`);
      return 0;
    }
    return engineCall("count rows", () => table.countRows(predicate || null));
  });
  return value;
}

export interface QueryOptions extends ReadAt {
  filter?: string;
  columns?: string[];
  /** Output name to SQL expression. */
  aliases?: Record<string, string>;
  limit: number;
  offset?: number;
  withRowId?: boolean;
  vector?: number[];
  vectorColumn?: string;
  distanceType?: string;
  nprobes?: number;
  minimumNprobes?: number;
  maximumNprobes?: number;
  distanceRange?: { lower?: number; upper?: number };
  refineFactor?: number;
  ef?: number;
  bypassVectorIndex?: boolean;
  postfilter?: boolean;
  fastSearch?: boolean;
  /** A query string over the given columns (all indexed ones when none), or a structured query. */
  fullText?: { query: string; columns?: string[] } | { structured: FullTextQuery };
  orderBy?: Array<{ columnName: string; ascending: boolean; nullsFirst: boolean }>;
}

/** The engine's query for the options; its setters check their arguments (a distance type, say) as it runs. */
function buildQuery(table: NativeTable, options: QueryOptions) {
  const base = table.query();
  const query = options.vector && options.vector.length ? base.nearestTo(Float32Array.from(options.vector)) : base;
  if (options.fullText && "structured" in options.fullText) query.fullTextSearch({ query: options.fullText.structured.inner });
  else if (options.fullText) query.fullTextSearch({ query: options.fullText.query, columns: options.fullText.columns ?? null });
  if (options.filter) query.onlyIf(options.filter);
  if (options.aliases) {
    // Named columns beside aliased expressions: each column is its own expression, quoted as a field path.
    const named = (options.columns ?? []).map((c): [string, string] => [c, `\`${c.replace(/`/g, "``")}\``]);
    query.select([...named, ...Object.entries(options.aliases)]);
  } else if (options.columns) {
    // A vector search answers its distances whether or not the columns name them; named, the engine does not log a
    // warning that one day it will not.
    const distances = query !== base && !options.columns.includes("_distance");
    query.selectColumns(distances ? [...options.columns, "_distance"] : options.columns);
  }
  query.limit(options.limit);
  if (options.offset) query.offset(options.offset);
  if (options.withRowId) query.withRowId();
  if (options.fastSearch) query.fastSearch();
  if (options.orderBy?.length) query.orderBy(options.orderBy);
  if (query !== base) {
    const vq = query as NativeVectorQuery;
    if (options.vectorColumn) vq.column(options.vectorColumn);
    if (options.distanceType) vq.distanceType(options.distanceType);
    if (options.nprobes) vq.nprobes(options.nprobes);
    if (options.minimumNprobes) vq.minimumNprobes(options.minimumNprobes);
    if (options.maximumNprobes) vq.maximumNprobes(options.maximumNprobes);
    if (options.distanceRange) vq.distanceRange(options.distanceRange.lower ?? null, options.distanceRange.upper ?? null);
    if (options.refineFactor) vq.refineFactor(options.refineFactor);
    if (options.ef) vq.ef(options.ef);
    if (options.bypassVectorIndex) vq.bypassVectorIndex();
    if (options.postfilter) vq.postfilter();
  } else if (options.distanceRange || options.minimumNprobes || options.maximumNprobes || options.nprobes || options.refineFactor || options.ef) {
    throw invalidInput("nprobes, distance bounds, refine_factor and ef apply to a vector search; the query has no vector");
  }
  return query;
}

/** Runs a query and answers an Arrow IPC file. */
export async function queryTable(tables: Tables, id: Id, options: QueryOptions): Promise<Buffer> {
  return tables.readAt(id, "be queried", options, (table) => queryHandle(table, options));
}

/** Runs a query on a handle already open at the version to read, and answers an Arrow IPC file. */
export function queryHandle(table: NativeTable, options: QueryOptions): Promise<Buffer> {
  return engineCall("query", async () => {
    const query = buildQuery(table, options);
    const iterator = await query.execute();
    const batches: Buffer[] = [];
    for (let b = await iterator.next(); b; b = await iterator.next()) batches.push(b);
    // Each batch carries the schema: only an empty answer asks the engine for it, which costs another look at the store.
    return joinIpcFiles(batches[0] ?? (await query.outputSchema()), batches);
  });
}

/** The engine's plan for a query, without running it (`verbose` adds each operator's details). */
export async function explainQuery(tables: Tables, id: Id, options: QueryOptions, verbose: boolean): Promise<string> {
  return tables.readAt(id, "be queried", options, (table) => engineCall("explain the query", () => buildQuery(table, options).explainPlan(verbose)));
}

/** Runs a query and answers its plan with what each operator did (rows, time), not its rows. */
export async function analyzeQuery(tables: Tables, id: Id, options: QueryOptions): Promise<string> {
  return tables.readAt(id, "be queried", options, (table) => engineCall("analyze the query", () => buildQuery(table, options).analyzePlan()));
}
