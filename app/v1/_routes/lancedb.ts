/** Table operations LanceDB's remote client uses beyond the seed: schema evolution, updates, deletes, indices, stats, rename. */
import { z } from "zod";
import { validateIdentifier } from "@/lib/identifiers";
import { QuiverError, invalidInput } from "@/server/errors";
import { json, route } from "@/server/http/api";
import { addColumns, createIndex, deleteRows, dropColumns, listIndices, tableStats, updateRows } from "@/server/table-ops";
import { context, delimiterQuery, requestBase, versionResponse } from "./common";


export const lancedbRoutes = [
  route({
    operationId: "AlterTableAddColumns",
    summary: "Add columns computed from SQL expressions",
    group: "Schema",
    methods: ["POST"],
    path: "/v1/table/{id}/add_columns",
    access: { need: "editor", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, new_columns: z.array(z.object({ name: z.string().min(1), expression: z.string().min(1) })) }) },
    response: z.object(versionResponse),
    handler: async ({ id, body, catalog }) => json(await addColumns(catalog, id, body.new_columns)),
  }),
  route({
    operationId: "AlterTableDropColumns",
    summary: "Drop columns",
    group: "Schema",
    methods: ["POST"],
    path: "/v1/table/{id}/drop_columns",
    access: { need: "editor", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, columns: z.array(z.string().min(1)) }) },
    response: z.object(versionResponse),
    handler: async ({ id, body, catalog }) => json(await dropColumns(catalog, id, body.columns)),
  }),
  route({
    operationId: "UpdateTable",
    summary: "Update rows matching a predicate with SQL expressions",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/update",
    access: { need: "editor", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({ ...requestBase, predicate: z.string().nullish(), updates: z.array(z.tuple([z.string().min(1), z.string()])) }),
    },
    response: z.object({ ...versionResponse, updated_rows: z.number().int(), rows_updated: z.number().int() }),
    handler: async ({ id, body, catalog }) => json(await updateRows(catalog, id, body.predicate ?? undefined, body.updates)),
  }),
  route({
    operationId: "DeleteFromTable",
    summary: "Delete rows matching a predicate",
    group: "Data",
    methods: ["POST"],
    path: "/v1/table/{id}/delete",
    access: { need: "editor", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, predicate: z.string().min(1) }) },
    response: z.object({ ...versionResponse, num_deleted_rows: z.number().int() }),
    handler: async ({ id, body, catalog }) => json(await deleteRows(catalog, id, body.predicate)),
  }),
  route({
    operationId: "GetTableStats",
    summary: "Size, rows, indices and fragment statistics",
    group: "Tables",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/stats",
    access: { need: "viewer", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(requestBase) },
    response: z.object({ total_bytes: z.number(), num_rows: z.number(), num_indices: z.number(), fragment_stats: z.any(), context }),
    handler: async ({ id, catalog }) => json(await tableStats(catalog, id)),
  }),
  route({
    operationId: "ListTableIndices",
    summary: "List a table's indices",
    group: "Tables",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/index/list",
    access: { need: "viewer", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, version: z.number().int().nullish() }) },
    response: z.object({ indexes: z.array(z.object({ index_name: z.string(), index_type: z.string(), columns: z.array(z.string()), status: z.string() })), context }),
    handler: async ({ id, catalog }) => json(await listIndices(catalog, id)),
  }),
  route({
    operationId: "CreateTableIndex",
    summary: "Build an index on a column (BTREE, BITMAP, LABEL_LIST, FTS, IVF_PQ, IVF_FLAT, IVF_HNSW_PQ, IVF_HNSW_SQ)",
    group: "Tables",
    methods: ["POST"],
    path: "/v1/table/{id}/create_index",
    access: { need: "editor", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        column: z.string().min(1),
        index_type: z.string().min(1),
        name: z.string().nullish(),
        distance_type: z.string().nullish(),
        replace: z.boolean().nullish(),
      }),
    },
    response: z.object({ context }),
    handler: async ({ id, body, catalog }) =>
      json(
        await createIndex(catalog, id, {
          column: body.column,
          indexType: body.index_type,
          name: body.name ?? undefined,
          distanceType: body.distance_type ?? undefined,
          replace: body.replace ?? undefined,
        }),
      ),
  }),
  route({
    operationId: "RenameTable",
    summary: "Rename a table, or move it to another child namespace",
    group: "Tables",
    methods: ["POST"],
    path: "/v1/table/{id}/rename",
    access: { need: "admin", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, new_table_name: z.string().min(1), new_namespace_id: z.array(z.string()).nullish() }) },
    response: z.object({ context }),
    handler: async ({ id, body, catalog, access, principal, database }) => {
      let namespace: string[] | undefined;
      if (body.new_namespace_id) {
        try {
          namespace = validateIdentifier(body.new_namespace_id);
        } catch (err) {
          throw invalidInput(`new_namespace_id: ${(err as Error).message}`);
        }
        if ((await access.roleOn(principal, database, [...namespace, body.new_table_name])) !== "admin") {
          throw new QuiverError("PermissionDenied", "moving a table needs the admin role on the target namespace too");
        }
      }
      await catalog.renameTable(id, body.new_table_name, namespace);
      return json({});
    },
  }),
];
