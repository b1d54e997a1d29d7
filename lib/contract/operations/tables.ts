/** Tables: declare, create, describe, register, deregister, rename, drop, their properties and stats. */
import { z } from "zod";
import { declaredTable, tableDescription, tableStatsAnswer } from "../catalog";
import { branchField, choice, context, delimiterQuery, pageQuery, pageToken, properties, qBool, qString, requestBase } from "../common";
import { declareFields, deregisteredTable, updatedTableProperties } from "../table-changes";
import { defineOperation } from "../operation";

const listAllQuery = z.object({ ...delimiterQuery, ...pageQuery, include_declared: qBool("Include declared-only tables (default true)") });
const listAllAnswer = z.object({ tables: z.array(z.string()), page_token: pageToken, context });

export const createTableQuery = z.object({
  ...delimiterQuery,
  mode: choice(["create", "exist_ok", "overwrite"], "Create (default), ExistOk or Overwrite"),
  properties: qString("Table properties as a JSON object of strings"),
  storage_options: qString("Only {} is taken: tables are written with the service's own storage settings (QUIVER_STORAGE_OPTIONS)"),
});

const createTableAnswer = z.object({
  version: z.number().int(),
  location: z.string(),
  storage_options: z.record(z.string(), z.string()),
  properties,
  context,
});

/** DeclareTable, and CreateEmptyTable: the name spec 0.4.4 gave it, which older clients still call. */
const declareOperation = (operationId: string, path: string, summary: string) =>
  defineOperation({
    operationId,
    summary,
    group: "Tables",
    methods: ["POST"],
    path,
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...declareFields }) },
    response: declaredTable,
  });

export const tableOperations = {
  DeclareTable: declareOperation("DeclareTable", "/v1/table/{id}/declare", "Declare a table: record it and reserve its location without writing data"),
  CreateEmptyTable: declareOperation("CreateEmptyTable", "/v1/table/{id}/create-empty", "Spec 0.4.4's name for DeclareTable, for older clients"),
  ListAllTables: defineOperation({
    operationId: "ListAllTables",
    summary: "List every table of every namespace, as full identifiers",
    group: "Tables",
    methods: ["GET"],
    path: "/v1/table",
    query: listAllQuery,
    response: listAllAnswer,
  }),
  CreateTable: defineOperation({
    operationId: "CreateTable",
    summary: "Create a table from an Arrow IPC stream (modes Create, ExistOk, Overwrite)",
    group: "Tables",
    methods: ["POST"],
    path: "/v1/table/{id}/create",
    query: createTableQuery,
    body: { kind: "arrow" },
    response: createTableAnswer,
  }),
  DescribeTable: defineOperation({
    operationId: "DescribeTable",
    summary: "Describe a table: location, version, schema, properties, state and statistics, at a version or tag",
    group: "Tables",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/describe",
    query: z.object({
      ...delimiterQuery,
      with_table_uri: qBool("Accepted; the location is always returned"),
      load_detailed_metadata: qBool("Accepted; details are always returned"),
      check_declared: qBool("Accepted; is_only_declared is always returned"),
    }),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        version: z.number().int().min(0).nullish(),
        tag: z.string().nullish(),
        branch: z.string().nullish(),
        with_table_uri: z.boolean().nullish(),
        load_detailed_metadata: z.boolean().nullish(),
        check_declared: z.boolean().nullish(),
        vend_credentials: z.boolean().nullish(),
      }),
    },
    response: tableDescription,
  }),
  TableExists: defineOperation({
    operationId: "TableExists",
    summary: "Check that a table exists (404 when it does not)",
    group: "Tables",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/exists",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, version: z.number().int().min(0).nullish() }) },
    response: z.object({ context }),
  }),
  DropTable: defineOperation({
    operationId: "DropTable",
    summary: "Drop a table and delete its data (declared-only tables too)",
    group: "Tables",
    methods: ["POST"],
    path: "/v1/table/{id}/drop",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(requestBase) },
    response: deregisteredTable,
  }),
  UpdateTableProperties: defineOperation({
    operationId: "UpdateTableProperties",
    summary: 'Quiver: set and remove a table\'s properties; `quiver.managed_versioning` ("true" or "false") switches whether the catalog manages its versions',
    group: "Tables",
    methods: ["POST"],
    path: "/v1/table/{id}/properties/update",
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        updates: properties.nullish().describe("properties to set, by key"),
        removals: z.array(z.string().min(1)).nullish().describe("keys of properties to remove"),
      }),
    },
    response: updatedTableProperties,
  }),
  RegisterTable: defineOperation({
    operationId: "RegisterTable",
    summary: "Catalog an existing Lance dataset under the data root as a table (location relative to the root)",
    group: "Tables",
    methods: ["POST"],
    path: "/v1/table/{id}/register",
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        location: z.string().min(1),
        mode: choice(["create", "overwrite"], "Create (default) or Overwrite", { nullable: true }),
        properties: properties.nullish(),
      }),
    },
    response: z.object({ location: z.string(), properties, context }),
  }),
  DeregisterTable: defineOperation({
    operationId: "DeregisterTable",
    summary: "Take a table out of the catalog and keep its files, to be registered again later",
    group: "Tables",
    methods: ["POST"],
    path: "/v1/table/{id}/deregister",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(requestBase) },
    response: deregisteredTable,
  }),
  ListTablesEnterprise: defineOperation({
    operationId: "ListTablesEnterprise",
    summary: "Enterprise edition: list tables",
    group: "Tables",
    methods: ["GET"],
    path: "/v1/tables",
    query: listAllQuery,
    response: listAllAnswer,
  }),
  CreateTableEnterprise: defineOperation({
    operationId: "CreateTableEnterprise",
    summary: "Enterprise edition: create a root-level table from an Arrow IPC stream",
    group: "Tables",
    methods: ["POST"],
    path: "/v1/tables/{table_name}",
    query: createTableQuery,
    body: { kind: "arrow" },
    response: createTableAnswer,
  }),
  GetTableStats: defineOperation({
    operationId: "GetTableStats",
    summary: "Size, rows, indices and fragment statistics",
    group: "Tables",
    methods: ["POST", "GET"],
    path: "/v1/table/{id}/stats",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...branchField }) },
    response: tableStatsAnswer,
  }),
  RenameTable: defineOperation({
    operationId: "RenameTable",
    summary: "Rename a table, or move it to another child namespace",
    group: "Tables",
    methods: ["POST"],
    path: "/v1/table/{id}/rename",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, new_table_name: z.string().min(1), new_namespace_id: z.array(z.string()).nullish() }) },
    response: z.object({ context }),
  }),
};
