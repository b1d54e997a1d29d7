/**
 * Compares two versions of a schema field by field, nested fields included. A field missing on one side and a
 * new field of the same type at the same position on the other is taken as a rename.
 */
import type { JsonDataType, JsonField, JsonSchema } from "./arrow-schema";

export type Change =
  | { kind: "same"; path: string[]; field: JsonField }
  | { kind: "added"; path: string[]; field: JsonField }
  | { kind: "removed"; path: string[]; field: JsonField }
  | { kind: "renamed"; path: string[]; from: string; field: JsonField }
  | { kind: "changed"; path: string[]; before: JsonField; field: JsonField; what: string[] };

export function typeLabel(t: JsonDataType): string {
  if (t.type === "list" || t.type === "large_list") return `${t.type}<${typeLabel(t.fields![0].type)}>`;
  if (t.type === "fixed_size_list") return `fixed_size_list<${typeLabel(t.fields![0].type)}, ${t.length}>`;
  if (t.type === "struct") return "struct";
  if (t.type === "fixed_size_binary") return `fixed_size_binary(${t.length})`;
  return t.type;
}

const sameType = (a: JsonDataType, b: JsonDataType) => typeLabel(a) === typeLabel(b);

function diffFields(before: JsonField[], after: JsonField[], prefix: string[]): Change[] {
  const changes: Change[] = [];
  const beforeNames = new Set(before.map((f) => f.name));
  const afterNames = new Set(after.map((f) => f.name));
  const renamedFrom = new Map<string, string>();
  after.forEach((field, i) => {
    const old = before[i];
    if (!afterNames.has(old?.name ?? "") && old && !beforeNames.has(field.name) && sameType(old.type, field.type)) renamedFrom.set(field.name, old.name);
  });
  const consumed = new Set(renamedFrom.values());
  for (const field of after) {
    const path = [...prefix, field.name];
    const from = renamedFrom.get(field.name);
    const old = before.find((f) => f.name === (from ?? field.name));
    if (!old) {
      changes.push({ kind: "added", path, field });
      continue;
    }
    const what: string[] = [];
    if (!sameType(old.type, field.type) && !(old.type.type === "struct" && field.type.type === "struct"))
      what.push(`type ${typeLabel(old.type)} → ${typeLabel(field.type)}`);
    if (old.nullable !== field.nullable) what.push(field.nullable ? "now nullable" : "now required");
    if (from) changes.push({ kind: "renamed", path, from, field });
    if (what.length) changes.push({ kind: "changed", path, before: old, field, what });
    if (!from && !what.length) changes.push({ kind: "same", path, field });
    if (old.type.type === "struct" && field.type.type === "struct") changes.push(...diffFields(old.type.fields ?? [], field.type.fields ?? [], path));
  }
  for (const field of before) {
    if (!afterNames.has(field.name) && !consumed.has(field.name)) changes.push({ kind: "removed", path: [...prefix, field.name], field });
  }
  return changes;
}

export function diffSchemas(before: JsonSchema, after: JsonSchema): Change[] {
  return diffFields(before.fields, after.fields, []);
}
