/**
 * Checks that a write's Arrow schema fits the table's before the engine sees it. The engine silently casts
 * between unrelated types (a string column into an integer one, value by value), which would store surprises;
 * Quiver admits only casts within one family (integer widths, float widths, string and binary sizes).
 */
import type { Schema } from "apache-arrow";
import { fieldToJson, type JsonDataType, type JsonField } from "@/lib/arrow-schema";
import { QuiverError } from "./errors";

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

export function checkWriteSchema(table: Schema, data: Schema, tableName: string) {
  const problem = fieldsProblem(table.fields.map(fieldToJson), data.fields.map(fieldToJson), "");
  if (problem) throw new QuiverError("TableSchemaValidationError", `the data does not fit table '${tableName}': ${problem}`);
}
