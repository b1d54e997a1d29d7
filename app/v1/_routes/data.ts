import { z } from "zod";
import { parseDuration } from "@/lib/durations";
import { config } from "@/server/config";
import { invalidInput } from "@/server/errors";
import { json, parseMode, qBool, qString, route } from "@/server/http/api";
import { alterColumns, countRows, insertRecords, mergeInsert, queryTable, restoreVersion } from "@/server/table-ops";
import { branchQuery, delimiterQuery, requestBase, versionResponse } from "./common";


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
    response: z.object({ ...versionResponse, num_inserted_rows: z.number().int() }),
    handler: async ({ id, query, body, catalog }) => {
      const mode = parseMode(query.mode, ["append", "overwrite"] as const, "append", "mode");
      return json(await insertRecords(catalog, id, body, mode, query.branch || undefined));
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
      on: z.union([z.string(), z.array(z.string())]).optional().describe("Key field path; repeat for a composite key"),
      when_matched_update_all: qBool("Update all columns of matched rows"),
      when_matched_update_all_filt: qString("SQL condition for updating a matched row; enables the update"),
      when_not_matched_insert_all: qBool("Insert rows that match no target row"),
      when_not_matched_by_source_delete: qBool("Delete target rows that match no source row"),
      when_not_matched_by_source_delete_filt: qString("SQL condition for deleting unmatched target rows; enables the delete"),
      timeout: qString("Time limit such as 500ms, 30s, 5m, 1h"),
      use_index: qBool("Whether to use an index to match rows"),
    }),
    body: { kind: "arrow" },
    response: z.object({
      ...versionResponse,
      num_updated_rows: z.number().int(),
      num_inserted_rows: z.number().int(),
      num_deleted_rows: z.number().int(),
    }),
    handler: async ({ id, query, body, catalog }) => {
      const on = query.on === undefined ? [] : Array.isArray(query.on) ? query.on : [query.on];
      if (on.length === 0 || on.some((o) => o.length === 0)) throw invalidInput("'on' is required: name the key column(s) to match rows on");
      let timeoutMs: number | undefined;
      if (query.timeout !== undefined) {
        timeoutMs = parseDuration(query.timeout) ?? undefined;
        if (timeoutMs === undefined) throw invalidInput(`timeout '${query.timeout}' is not a duration such as 500ms, 30s, 5m or 1h`);
      }
      return json(
        await mergeInsert(catalog, id, body, {
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
    handler: async ({ id, body, query, catalog }) => {
      const value = await countRows(catalog, id, body.predicate ?? undefined, {
        version: body.version ?? undefined,
        branch: body.branch ?? query.branch ?? undefined,
      });
      return { kind: "integer", value };
    },
  }),
  route({
    operationId: "QueryTable",
    summary: "Query rows (filter, columns, limit, offset, version or tag, vector search); answers an Arrow IPC file",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/query",
    access: { need: "viewer", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        filter: z.string().nullish(),
        columns: z
          .union([
            z.array(z.string()),
            z.object({ column_names: z.array(z.string()).nullish(), column_aliases: z.record(z.string(), z.string()).nullish() }),
          ])
          .nullish(),
        limit: z.number().int().min(0).nullish(),
        k: z.number().min(0).nullish(),
        offset: z.number().int().min(0).nullish(),
        version: z.number().int().min(0).nullish(),
        tag: z.string().nullish(),
        branch: z.string().nullish(),
        with_row_id: z.boolean().nullish(),
        vector: z
          .union([z.array(z.number()), z.object({ single_vector: z.array(z.number()).nullish(), multi_vector: z.array(z.array(z.number())).nullish() })])
          .nullish(),
        vector_column: z.string().nullish(),
        distance_type: z.string().nullish(),
        nprobes: z.number().int().min(0).nullish(),
        refine_factor: z.number().int().min(0).nullish(),
        ef: z.number().int().min(0).nullish(),
        prefilter: z.boolean().nullish(),
        bypass_vector_index: z.boolean().nullish(),
      }),
    },
    response: "arrow-file",
    handler: async ({ id, body, catalog }) => {
      const requested = body.limit ?? (body.k !== undefined && body.k !== null ? Math.min(body.k, Number.MAX_SAFE_INTEGER) : undefined);
      const limit = requested === undefined || requested === 0 ? 10 : Math.min(requested, config.maxQueryRows);
      const columns = Array.isArray(body.columns) ? body.columns : (body.columns?.column_names ?? undefined);
      const aliases = Array.isArray(body.columns) ? undefined : (body.columns?.column_aliases ?? undefined);
      const vector = Array.isArray(body.vector) ? body.vector : (body.vector?.single_vector ?? body.vector?.multi_vector?.[0] ?? undefined);
      const file = await queryTable(catalog, id, {
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
        refineFactor: body.refine_factor ?? undefined,
        ef: body.ef ?? undefined,
        bypassVectorIndex: body.bypass_vector_index ?? undefined,
        postfilter: body.prefilter === false,
      });
      return { kind: "arrow-file", body: file };
    },
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
        branch: z.string().nullish(),
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
    response: z.object(versionResponse),
    handler: async ({ id, body, catalog }) => {
      const alterations = body.alterations.map((a) => ({
        path: a.path,
        rename: a.rename ?? undefined,
        nullable: a.nullable ?? undefined,
        data_type: a.data_type ?? undefined,
        virtual_column: a.virtual_column ?? undefined,
      }));
      return json(await alterColumns(catalog, id, alterations, body.branch ?? undefined));
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
    response: z.object(versionResponse),
    handler: async ({ id, body, catalog }) => json(await restoreVersion(catalog, id, body.version, body.branch ?? undefined)),
  }),
];
