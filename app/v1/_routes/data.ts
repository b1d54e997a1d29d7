import { z } from "zod";
import { parseDuration } from "@/lib/durations";
import { invalidInput } from "@/server/errors";
import { json, parseMode, qBool, qString, remoteDialect, route } from "@/server/http/route";
import { analyzeQuery, countRows, explainQuery, queryTable } from "@/server/tables/queries";
import { alterColumns, insertRecords, mergeInsert, restoreVersion, updateFieldMetadata, updateSchemaMetadata } from "@/server/tables/writes";
import { queryFields, queryOptions } from "./query-request";
import { schemaMetadata } from "@/lib/contract/catalog";
import { branchField, branchQuery, delimiterQuery, insertAnswer, mergeInsertAnswer, requestBase, versionAnswer, versionResponse } from "@/lib/contract/common";

export const dataRoutes = [
  route({
    operationId: "InsertIntoTable",
    summary: "Insert records from an Arrow IPC stream (mode Append or Overwrite); creates a declared-only table",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/insert",
    access: { need: "editor", on: "table" },
    query: z.object({ ...delimiterQuery, ...branchQuery, mode: qString("Append (default) or Overwrite, case-insensitive") }),
    body: { kind: "arrow" },
    response: insertAnswer,
    // Appending no rows commits nothing; overwriting with none commits an empty version.
    commits: (answer, query) => answer.num_inserted_rows > 0 || parseMode(query.mode, ["append", "overwrite"] as const, "append", "mode") === "overwrite",
    handler: async ({ id, query, body, tables }) => {
      const mode = parseMode(query.mode, ["append", "overwrite"] as const, "append", "mode");
      return json(await insertRecords(tables, id, body, mode, query.branch || undefined));
    },
  }),
  route({
    operationId: "MergeInsertIntoTable",
    summary: "Merge-insert (upsert) records from an Arrow IPC stream, matching rows on one or more key columns",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/merge_insert",
    access: { need: "editor", on: "table" },
    query: z.object({
      ...delimiterQuery,
      ...branchQuery,
      on: z
        .union([z.string(), z.array(z.string())])
        .optional()
        .describe("Key field path; repeat for a composite key"),
      when_matched_update_all: qBool("Update all columns of matched rows"),
      when_matched_update_all_filt: qString("SQL condition for updating a matched row; enables the update"),
      when_not_matched_insert_all: qBool("Insert rows that match no target row"),
      when_not_matched_by_source_delete: qBool("Delete target rows that match no source row"),
      when_not_matched_by_source_delete_filt: qString("SQL condition for deleting unmatched target rows; enables the delete"),
      timeout: qString("Time limit such as 500ms, 30s, 5m, 1h"),
      use_index: qBool("Whether to use an index to match rows"),
    }),
    body: { kind: "arrow" },
    response: mergeInsertAnswer,
    // A merge that could change nothing is not attempted.
    commits: (answer) => answer.num_attempts !== 0,
    handler: async ({ id, query, body, tables }) => {
      const on = query.on === undefined ? [] : Array.isArray(query.on) ? query.on : [query.on];
      if (on.length === 0 || on.some((o) => o.length === 0)) throw invalidInput("'on' is required: name the key column(s) to match rows on");
      let timeoutMs: number | undefined;
      if (query.timeout !== undefined) {
        timeoutMs = parseDuration(query.timeout) ?? undefined;
        if (timeoutMs === undefined) throw invalidInput(`timeout '${query.timeout}' is not a duration such as 500ms, 30s, 5m or 1h`);
      }
      return json(
        await mergeInsert(tables, id, body, {
          on,
          whenMatchedUpdateAll: query.when_matched_update_all ?? false,
          whenMatchedUpdateAllFilt: query.when_matched_update_all_filt || undefined,
          whenNotMatchedInsertAll: query.when_not_matched_insert_all ?? false,
          whenNotMatchedBySourceDelete: query.when_not_matched_by_source_delete ?? false,
          whenNotMatchedBySourceDeleteFilt: query.when_not_matched_by_source_delete_filt || undefined,
          timeoutMs,
          useIndex: query.use_index,
          branch: query.branch || undefined,
        }),
      );
    },
  }),
  route({
    operationId: "CountTableRows",
    summary: "Count rows, optionally matching a predicate, at a version; answers a bare integer",
    group: "Data",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/count_rows",
    access: { need: "viewer", on: "table" },
    heavy: true,
    query: z.object({ ...delimiterQuery, ...branchQuery }),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        predicate: z.string().nullish(),
        version: z.number().int().min(0).nullish(),
        branch: z.string().nullish(),
      }),
    },
    response: "integer",
    handler: async ({ id, body, query, tables }) => {
      const value = await countRows(tables, id, body.predicate ?? undefined, {
        version: body.version ?? undefined,
        branch: body.branch ?? query.branch ?? undefined,
      });
      return { kind: "integer", value };
    },
  }),
  route({
    operationId: "QueryTable",
    summary: "Query rows (filter, projection with expressions, order, limit, offset, version or tag; vector or full-text search); answers an Arrow IPC file",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/query",
    access: { need: "viewer", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...queryFields }) },
    response: "arrow-file",
    handler: async ({ id, body, tables, request }) => ({
      kind: "arrow-file",
      body: await queryTable(tables, id, queryOptions(body, remoteDialect(request))),
    }),
  }),
  route({
    operationId: "ExplainTableQueryPlan",
    summary: "The engine's plan for a query, without running it",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/explain_plan",
    access: { need: "viewer", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, query: z.object(queryFields), verbose: z.boolean().nullish() }) },
    response: z.string(),
    handler: async ({ id, body, tables, request }) =>
      json(await explainQuery(tables, id, queryOptions(body.query, remoteDialect(request)), body.verbose ?? false)),
  }),
  route({
    operationId: "AnalyzeTableQueryPlan",
    summary: "Run a query and answer its plan with what each step did (rows, time) instead of its rows",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/analyze_plan",
    access: { need: "viewer", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...queryFields }) },
    response: z.string(),
    handler: async ({ id, body, tables, request }) => json(await analyzeQuery(tables, id, queryOptions(body, remoteDialect(request)))),
  }),
  route({
    operationId: "AlterTableAlterColumns",
    summary: "Alter columns: rename, nullability, data type",
    group: "Schema",
    methods: ["POST"],
    path: "/v1/table/{id}/alter_columns",
    access: { need: "editor", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        ...branchField,
        alterations: z.array(
          z.object({
            path: z.string().min(1),
            rename: z.string().nullish(),
            nullable: z.boolean().nullish(),
            data_type: z.any().optional(),
            virtual_column: z.any().optional(),
          }),
        ),
      }),
    },
    response: versionAnswer,
    commits: true,
    handler: async ({ id, body, tables }) => {
      const alterations = body.alterations.map((a) => ({
        path: a.path,
        rename: a.rename ?? undefined,
        nullable: a.nullable ?? undefined,
        data_type: a.data_type ?? undefined,
        virtual_column: a.virtual_column ?? undefined,
      }));
      return json(await alterColumns(tables, id, alterations, body.branch ?? undefined));
    },
  }),
  route({
    operationId: "UpdateFieldMetadata",
    summary: "Set, delete or replace the metadata of columns and nested fields",
    group: "Schema",
    methods: ["POST"],
    path: "/v1/table/{id}/update_field_metadata",
    access: { need: "editor", on: "table" },
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        ...branchField,
        updates: z.array(
          z.object({
            path: z.string().min(1),
            metadata: z.record(z.string(), z.string().nullable()).describe("A null value deletes the key"),
            replace: z.boolean().nullish().describe("Replace the field's whole metadata instead of merging"),
          }),
        ),
      }),
    },
    response: z.object({ ...versionResponse, fields: z.record(z.string(), z.record(z.string(), z.string())) }),
    commits: true,
    handler: async ({ id, body, tables }) =>
      json(
        await updateFieldMetadata(
          tables,
          id,
          body.updates.map((u) => ({ ...u, replace: u.replace ?? undefined })),
          body.branch ?? undefined,
        ),
      ),
  }),
  route({
    operationId: "UpdateTableSchemaMetadata",
    summary: "Set keys of the table schema's metadata in a new version; the body and the answer are bare maps (the answer: all of it)",
    group: "Schema",
    methods: ["POST"],
    path: "/v1/table/{id}/schema_metadata/update",
    access: { need: "editor", on: "table" },
    query: z.object({ ...delimiterQuery, ...branchQuery }),
    body: { kind: "json", schema: schemaMetadata },
    response: schemaMetadata,
    handler: async ({ id, query, body, tables, committed }) => {
      const { metadata, version } = await updateSchemaMetadata(tables, id, body, query.branch || undefined);
      if (version !== null) committed({ table: id, version, branch: query.branch || undefined });
      return { ...json(metadata), bare: true };
    },
  }),
  route({
    operationId: "RestoreTable",
    summary: "Restore a table to an earlier version, as a new version",
    group: "Schema",
    methods: ["POST"],
    path: "/v1/table/{id}/restore",
    access: { need: "editor", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, version: z.number().int().min(0), branch: z.string().nullish() }) },
    response: versionAnswer,
    commits: true,
    handler: async ({ id, body, tables }) => json(await restoreVersion(tables, id, body.version, body.branch ?? undefined)),
  }),
];
