/** SQL over the tables of a database: Quiver's own operations, beside the spec's. */
import { z } from "zod";
import { context, requestBase } from "../common";
import { defineOperation } from "../operation";

export const SQL_MAX_TEXT = 100_000;

/** A statement names no table by path: an `id` in its body would have nothing to agree with, so it is refused. */
export const sqlRequest = z.object({
  identity: requestBase.identity,
  context: requestBase.context,
  query: z
    .string()
    .min(1)
    .max(SQL_MAX_TEXT)
    .describe(
      "One read-only statement (SELECT, WITH … SELECT, VALUES, a set operation) in DuckDB's SQL. Tables are named as in the catalog: `table` in the root namespace, `namespace.table`, `outer.inner.table`; `namespace.table AT (VERSION => 3)` or `AT (VERSION => 'tag')` reads a version or a tag. `vector_search('ns.table', [..], k)` and `text_search('ns.table', 'words', k)` are tables of the rows Lance's search finds, with `_distance` or `_score`",
    ),
  format: z.enum(["arrow", "json"]).nullish().describe("arrow (default): an Arrow IPC stream; json: the rows as JSON"),
  max_rows: z.number().int().min(1).nullish().describe("Rows to answer at most; the service's cap (QUIVER_SQL_MAX_ROWS) when larger or absent"),
  truncate: z.boolean().nullish().describe("Past max_rows, answer the first rows marked truncated instead of failing"),
});

/** What a query read of each table, for its answer (and the Arrow answer's `quiver.sql` schema metadata). */
export const sqlSourceRead = z.object({
  table: z.array(z.string()),
  version: z.number().int(),
  columns: z.array(z.string()).describe("The columns Lance read for the query"),
  filter: z.string().nullable().describe("The filter Lance applied (the query's WHERE applies whole after it)"),
  limit: z.number().int().nullable().describe("The rows Lance stopped at, when the query's LIMIT let it"),
  rows: z.number().int().describe("Rows Lance handed to the query"),
  search: z.string().optional().describe("For vector_search and text_search: the search Lance ran"),
});

export const sqlAnswerFacts = z.object({
  truncated: z.boolean().describe("More rows than max_rows: these are the first"),
  sources: z.array(sqlSourceRead),
  open_ms: z.number().describe("Time parsing the statement, checking the caller's rights and opening its tables"),
  plan_ms: z.number().describe("Time making the query's DuckDB and planning the statement"),
  read_ms: z.number().describe("Time reading the tables"),
  run_ms: z.number().describe("Time running the statement over what was read"),
});
export type SqlAnswerFacts = z.output<typeof sqlAnswerFacts>;

export const sqlJsonAnswer = sqlAnswerFacts.extend({
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  rows: z.array(z.array(z.unknown())).describe("Rows as arrays; 64-bit integers past 2^53 as strings, binary values as base64"),
  context,
});

export const sqlVocabulary = z.object({
  tables: z.array(z.array(z.string())).describe("The tables the caller may read, by identifier"),
  functions: z.array(z.object({ name: z.string(), kind: z.string() })).describe("DuckDB's functions: scalar, aggregate, table"),
  keywords: z.array(z.string()),
  context,
});

export const savedQuery = z.object({ id: z.string(), name: z.string(), sql: z.string(), updated_at: z.string() });
export type SavedQuery = z.output<typeof savedQuery>;

export const sqlOperations = {
  RunSql: defineOperation({
    operationId: "RunSql",
    summary:
      "Run a read-only SQL statement over the tables the caller may read; answers an Arrow IPC stream (schema metadata `quiver.sql`: truncated, what was read of each table) or, with format json, JSON",
    group: "SQL",
    methods: ["POST"],
    path: "/v1/sql",
    body: { kind: "json", schema: sqlRequest },
    response: "arrow-stream",
  }),
  DescribeSqlVocabulary: defineOperation({
    operationId: "DescribeSqlVocabulary",
    summary: "The names a SQL statement may use, for completion: the tables the caller may read, DuckDB's functions and keywords",
    group: "SQL",
    methods: ["GET"],
    path: "/v1/sql/vocabulary",
    response: sqlVocabulary,
  }),
  ListSavedQueries: defineOperation({
    operationId: "ListSavedQueries",
    summary: "The caller's saved SQL queries, by name",
    group: "SQL",
    methods: ["GET"],
    path: "/v1/sql/saved",
    response: z.object({ queries: z.array(savedQuery), context }),
  }),
  SaveQuery: defineOperation({
    operationId: "SaveQuery",
    summary: "Save a SQL query under a name for the caller, or replace one of the caller's by its id",
    group: "SQL",
    methods: ["POST"],
    path: "/v1/sql/saved/save",
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        id: z.string().nullish().describe("The saved query to replace; a new one when absent"),
        name: z.string().trim().min(1).max(200),
        sql: z.string().min(1).max(SQL_MAX_TEXT),
      }),
    },
    response: savedQuery.extend({ context }),
  }),
  DeleteSavedQuery: defineOperation({
    operationId: "DeleteSavedQuery",
    summary: "Delete one of the caller's saved SQL queries",
    group: "SQL",
    methods: ["POST"],
    path: "/v1/sql/saved/delete",
    body: { kind: "json", schema: z.object({ ...requestBase, id: z.string() }) },
    response: "empty",
  }),
};
