/** Schema evolution: add, alter and drop columns, field metadata and the schema's metadata. */

import { z } from "zod";
import { json, route } from "@/server/http/route";
import { addColumns, dropColumns, alterColumns, updateFieldMetadata, updateSchemaMetadata } from "@/server/tables/writes";
import { branchField, branchQuery, delimiterQuery, requestBase, versionAnswer, versionResponse } from "@/lib/contract/common";
import { schemaMetadata } from "@/lib/contract/catalog";
export const columnRoutes = [
  route({
    operationId: "AlterTableAddColumns",
    summary: "Add columns computed from SQL expressions",
    group: "Columns",
    methods: ["POST"],
    path: "/v1/table/{id}/add_columns",
    access: { need: "editor", on: "table" },
    heavy: true,
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({ ...requestBase, ...branchField, new_columns: z.array(z.object({ name: z.string().min(1), expression: z.string().min(1) })) }),
    },
    response: versionAnswer,
    commits: true,
    handler: async ({ id, body, tables }) => json(await addColumns(tables, id, body.new_columns, body.branch ?? undefined)),
  }),
  route({
    operationId: "AlterTableDropColumns",
    summary: "Drop columns",
    group: "Columns",
    methods: ["POST"],
    path: "/v1/table/{id}/drop_columns",
    access: { need: "editor", on: "table" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...branchField, columns: z.array(z.string().min(1)) }) },
    response: versionAnswer,
    commits: true,
    handler: async ({ id, body, tables }) => json(await dropColumns(tables, id, body.columns, body.branch ?? undefined)),
  }),
  route({
    operationId: "AlterTableAlterColumns",
    summary: "Alter columns: rename, nullability, data type",
    group: "Columns",
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
    group: "Columns",
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
    group: "Columns",
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
];
