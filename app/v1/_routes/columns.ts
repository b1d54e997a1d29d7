/** Schema evolution: add, alter and drop columns, field metadata and the schema's metadata. */
import { json, route } from "@/server/http/route";
import { addColumns, dropColumns, alterColumns, fieldMetadataAt, updateFieldMetadata, updateSchemaMetadata } from "@/server/tables/writes";
import { columnOperations as ops } from "@/lib/contract/operations/columns";

/** A column change applied once per request; one decided from the table's history answers its version. */
const once = { scope: "table", decided: async ({ version }: { version: number }) => json({ version }) } as const;

export const columnRoutes = [
  route({
    ...ops.AlterTableAddColumns,
    access: { need: "editor", on: "table" },
    heavy: true,
    commits: true,
    once,
    handler: async ({ id, body, tables }) => json(await addColumns(tables, id, body.new_columns, body.branch ?? undefined)),
  }),
  route({
    ...ops.AlterTableDropColumns,
    access: { need: "editor", on: "table" },
    commits: true,
    once,
    handler: async ({ id, body, tables }) => json(await dropColumns(tables, id, body.columns, body.branch ?? undefined)),
  }),
  route({
    ...ops.AlterTableAlterColumns,
    access: { need: "editor", on: "table" },
    heavy: true,
    commits: true,
    once,
    handler: async ({ id, body, tables }) => {
      const alterations = body.alterations.map((a) => ({
        path: a.path,
        rename: a.rename ?? undefined,
        nullable: a.nullable ?? undefined,
        data_type: a.data_type ?? undefined,
      }));
      return json(await alterColumns(tables, id, alterations, body.branch ?? undefined));
    },
  }),
  route({
    ...ops.UpdateFieldMetadata,
    access: { need: "editor", on: "table" },
    commits: true,
    once: {
      scope: "table",
      decided: async ({ version }, { id, body, tables }) => json(await fieldMetadataAt(tables, id, body.updates, version, body.branch ?? undefined)),
    },
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
    ...ops.UpdateTableSchemaMetadata,
    access: { need: "editor", on: "table" },
    handler: async ({ id, query, body, tables, committed }) => {
      const { metadata, version } = await updateSchemaMetadata(tables, id, body, query.branch || undefined);
      if (version !== null) committed({ table: id, version, branch: query.branch || undefined });
      return { ...json(metadata), bare: true };
    },
  }),
];
