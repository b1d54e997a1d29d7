/**
 * Whether data of one schema may be written into a table of another. The engine silently casts between unrelated
 * types (a string column into an integer one, value by value); only casts within a family are admitted here.
 */
import type { JsonDataType, JsonField } from "./arrow-schema";

function family(type: string): string {
  if (/^u?int\d+$/.test(type)) return "integer";
  if (type === "halffloat" || type === "float" || type === "double") return "float";
  if (type === "string" || type === "large_string") return "string";
  if (type === "binary" || type === "large_binary") return "binary";
  return type.split(":")[0];
}

function compatible(target: JsonDataType, source: JsonDataType, path: string): string | null {
  if (family(target.type) !== family(source.type)) return `column '${path}' is ${target.type} in the table but ${source.type} in the data`;
  if (target.type === "fixed_size_list" && target.length !== source.length) {
    return `column '${path}' has ${target.length} values per row in the table but ${source.length} in the data`;
  }
  if (target.fields && source.fields) {
    if (target.type === "struct") return fieldsProblem(target.fields, source.fields, `${path}.`);
    return compatible(target.fields[0].type, source.fields[0].type, `${path}.item`);
  }
  return null;
}

function fieldsProblem(target: JsonField[], source: JsonField[], prefix: string): string | null {
  for (const field of source) {
    const match = target.find((t) => t.name === field.name);
    if (!match) return `column '${prefix}${field.name}' is not in the table`;
    const problem = compatible(match.type, field.type, `${prefix}${field.name}`);
    if (problem) return problem;
  }
  return null;
}

/** Why data with `data`'s fields cannot go into a table with `table`'s fields, or null when it can. */
export function writeSchemaProblem(table: JsonField[], data: JsonField[]): string | null {
  return fieldsProblem(table, data, "");
}
