/** A table's schema: add, alter and drop columns, field metadata and the schema's metadata. */
import { z } from "zod";
import { schemaMetadata } from "../catalog";
import { branchField, branchQuery, delimiterQuery, requestBase, transactionIdField, unsupported, versionResponse, writeAnswer } from "../common";
import { defineOperation } from "../operation";

export const columnOperations = {
  AlterTableAddColumns: defineOperation({
    operationId: "AlterTableAddColumns",
    summary: "Add columns computed from SQL expressions",
    group: "Columns",
    methods: ["POST"],
    path: "/v1/table/{id}/add_columns",
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        ...branchField,
        new_columns: z.array(
          z.object({
            name: z.string().min(1),
            expression: z.string().min(1),
            computed: unsupported("computed columns (kept up to date by backfill) are not supported by this service; give an expression"),
            virtual_column: unsupported("virtual columns are not supported by this service; give an expression"),
          }),
        ),
      }),
    },
    response: writeAnswer,
  }),
  AlterTableDropColumns: defineOperation({
    operationId: "AlterTableDropColumns",
    summary: "Drop columns",
    group: "Columns",
    methods: ["POST"],
    path: "/v1/table/{id}/drop_columns",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object({ ...requestBase, ...branchField, columns: z.array(z.string().min(1)) }) },
    response: writeAnswer,
  }),
  AlterTableAlterColumns: defineOperation({
    operationId: "AlterTableAlterColumns",
    summary: "Alter columns: rename, nullability, data type",
    group: "Columns",
    methods: ["POST"],
    path: "/v1/table/{id}/alter_columns",
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
            virtual_column: unsupported("virtual columns are not supported by this service"),
          }),
        ),
      }),
    },
    response: writeAnswer,
  }),
  UpdateFieldMetadata: defineOperation({
    operationId: "UpdateFieldMetadata",
    summary: "Set, delete or replace the metadata of columns and nested fields",
    group: "Columns",
    methods: ["POST"],
    path: "/v1/table/{id}/update_field_metadata",
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
    response: z.object({ ...versionResponse, ...transactionIdField, fields: z.record(z.string(), z.record(z.string(), z.string())) }),
  }),
  UpdateTableSchemaMetadata: defineOperation({
    operationId: "UpdateTableSchemaMetadata",
    summary: "Set keys of the table schema's metadata in a new version; the body and the answer are bare maps (the answer: all of it)",
    group: "Columns",
    methods: ["POST"],
    path: "/v1/table/{id}/schema_metadata/update",
    query: z.object({ ...delimiterQuery, ...branchQuery }),
    body: { kind: "json", schema: schemaMetadata },
    response: schemaMetadata,
  }),
};
