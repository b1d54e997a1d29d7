/** Column alterations drafted in the console, and the schema they would produce. */
import type { JsonField, JsonSchema } from "./arrow-schema";
import { formatFieldPath } from "./field-path";

export interface AlterationDraft {
  path: string[];
  rename?: string;
  nullable?: boolean;
  type?: string;
}

export function flattenFields(fields: JsonField[], prefix: string[] = []): Array<{ path: string[]; field: JsonField }> {
  return fields.flatMap((f) => [
    { path: [...prefix, f.name], field: f },
    ...(f.type.type === "struct" ? flattenFields(f.type.fields ?? [], [...prefix, f.name]) : []),
  ]);
}

function applyOne(fields: JsonField[], draft: AlterationDraft, depth = 0): JsonField[] {
  return fields.map((f) => {
    if (f.name !== draft.path[depth]) return f;
    if (depth < draft.path.length - 1) return { ...f, type: { ...f.type, fields: applyOne(f.type.fields ?? [], draft, depth + 1) } };
    return {
      ...f,
      name: draft.rename || f.name,
      nullable: draft.nullable ?? f.nullable,
      type: draft.type ? { type: draft.type } : f.type,
    };
  });
}

export function previewSchema(schema: JsonSchema, drafts: AlterationDraft[]): JsonSchema {
  return { ...schema, fields: drafts.reduce((fields, d) => applyOne(fields, d), schema.fields) };
}

/** The request body's alterations: paths in field-path syntax, types as JSON data types. */
export function toRequest(drafts: AlterationDraft[]) {
  return drafts.map((d) => ({
    path: formatFieldPath(d.path),
    ...(d.rename ? { rename: d.rename } : {}),
    ...(d.nullable !== undefined ? { nullable: d.nullable } : {}),
    ...(d.type ? { data_type: { type: d.type } } : {}),
  }));
}
