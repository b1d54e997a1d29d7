/**
 * The query a client describes, as QueryTable, ExplainTableQueryPlan and AnalyzeTableQueryPlan take it: the Lance
 * Namespace's QueryTableRequest, and the shapes LanceDB's remote client sends for the same things (a bare
 * `{alias: expression}` map of columns, a full-text query as `{query, columns}`).
 */
import type { z } from "zod";
import { isDeepStrictEqual } from "node:util";
import { stringQuery, type QueryRequest } from "@/lib/contract/query";
import { sameIdentifier } from "@/lib/identifiers";
import { config } from "@/server/config";
import { invalidInput } from "@/server/errors";
import { identifierIn } from "@/server/http/route";
import { ftsQuery } from "@/server/lance/fts-query";
import type { QueryOptions } from "@/server/tables/queries";

type Identity = { api_key?: string; auth_token?: string } | null | undefined;

/**
 * ExplainTableQueryPlan's query: a whole QueryTable request inside the request, as Lance's RestNamespace sends it, so
 * its id, identity and branch are said twice; each must agree, and the branch may be given on either.
 */
export function explainedQuery(
  body: { identity?: Identity; branch?: string | null; query: QueryRequest & { id?: string[] | null; identity?: Identity } },
  id: string[],
): QueryRequest {
  const { query } = body;
  if (query.id && !sameIdentifier(identifierIn(query.id, "query.id"), id)) throw invalidInput("query.id does not match the id in the path");
  if (query.identity && !isDeepStrictEqual(query.identity, body.identity)) throw invalidInput("query.identity differs from the request's identity");
  if (body.branch && query.branch && body.branch !== query.branch)
    throw invalidInput(`branch '${body.branch}' and query.branch '${query.branch}' name different branches; give one`);
  return { ...query, branch: query.branch ?? body.branch };
}

/**
 * The query as the engine runs it. `remote` is LanceDB's remote client, for which a `k` of 0 means no rows, as the
 * engine takes a limit of 0; Lance's DirectoryNamespace reads a `k` of 0 as its default of 10.
 */
export function queryOptions(body: QueryRequest, remote: boolean): QueryOptions {
  const requested = body.limit ?? (body.k !== undefined && body.k !== null ? Math.min(body.k, Number.MAX_SAFE_INTEGER) : undefined);
  const limit = requested === undefined ? 10 : requested === 0 && !remote ? 10 : Math.min(requested, config.maxQueryRows);
  const { columns, aliases } = projection(body.columns);
  const vector = Array.isArray(body.vector) ? body.vector : (body.vector?.single_vector ?? body.vector?.multi_vector?.[0] ?? undefined);
  const fullText = fullTextOf(body.full_text_query);
  if (fullText && vector?.length) {
    throw invalidInput("a query is a vector search or a full-text search, not both: send them as two queries and combine the results");
  }
  return {
    filter: body.filter ?? undefined,
    columns,
    aliases,
    limit,
    offset: body.offset ?? undefined,
    version: body.version ?? undefined,
    tag: body.tag ?? undefined,
    branch: body.branch ?? undefined,
    withRowId: body.with_row_id ?? undefined,
    vector,
    vectorColumn: body.vector_column ?? undefined,
    distanceType: body.distance_type ?? undefined,
    nprobes: body.nprobes ?? undefined,
    minimumNprobes: body.minimum_nprobes ?? undefined,
    maximumNprobes: body.maximum_nprobes ?? undefined,
    distanceRange:
      body.lower_bound != null || body.upper_bound != null ? { lower: body.lower_bound ?? undefined, upper: body.upper_bound ?? undefined } : undefined,
    refineFactor: body.refine_factor ?? undefined,
    ef: body.ef ?? undefined,
    bypassVectorIndex: body.bypass_vector_index ?? undefined,
    postfilter: body.prefilter === false,
    fastSearch: body.fast_search ?? undefined,
    fullText,
    orderBy: body.order_by?.map((o) => ({ columnName: o.column_name, ascending: o.ascending ?? true, nullsFirst: o.nulls_first ?? false })),
  };
}

function projection(columns: QueryRequest["columns"]): { columns?: string[]; aliases?: Record<string, string> } {
  if (!columns) return {};
  if (Array.isArray(columns)) return { columns };
  if ("column_names" in columns || "column_aliases" in columns) {
    const spec = columns as { column_names?: string[] | null; column_aliases?: Record<string, string> | null };
    if (Array.isArray(spec.column_names) || (spec.column_aliases && typeof spec.column_aliases === "object")) {
      return { columns: spec.column_names ?? undefined, aliases: spec.column_aliases ?? undefined };
    }
  }
  const aliases = columns as Record<string, string>;
  if (Object.keys(aliases).length === 0) throw invalidInput("columns names no column to return");
  return { aliases };
}

function fullTextOf(query: QueryRequest["full_text_query"]): QueryOptions["fullText"] {
  if (!query) return undefined;
  if ("query" in query && typeof query.query === "string") return { query: query.query, columns: query.columns?.length ? query.columns : undefined };
  const spec = query as { string_query?: z.output<typeof stringQuery> | null; structured_query?: unknown };
  if (spec.structured_query && spec.string_query) throw invalidInput("full_text_query takes a string_query or a structured_query, not both");
  if (spec.structured_query) return { structured: ftsQuery((spec.structured_query as { query: unknown }).query) };
  if (!spec.string_query) throw invalidInput("full_text_query needs a string_query or a structured_query");
  return { query: spec.string_query.query, columns: spec.string_query.columns?.length ? spec.string_query.columns : undefined };
}
