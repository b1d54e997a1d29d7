/** Field paths in requests (`a.b.c`), and finding the field a path names in a schema. */
import "server-only";
import type { Field } from "apache-arrow";
import { parseFieldPath } from "@/lib/field-path";
import { QuiverError, invalidInput } from "@/server/errors";

/** A field path from the request; a malformed one is the caller's error, named by `where`. */
export function requestedFieldPath(path: string, where: string): string[] {
  try {
    return parseFieldPath(path);
  } catch (err) {
    throw invalidInput(`${where}: ${(err as Error).message}`);
  }
}

export interface FieldLike {
  name: string;
  type: { children?: FieldLike[] };
  metadata?: Map<string, string>;
}

export function resolveField(fields: readonly FieldLike[] | Field[], segments: string[]): FieldLike | undefined {
  let current: readonly FieldLike[] = fields as readonly FieldLike[];
  let found: FieldLike | undefined;
  for (const segment of segments) {
    found = current.find((f) => f.name === segment);
    if (!found) return undefined;
    current = found.type.children ?? [];
  }
  return found;
}

/** The segments of a column path the request names (`where` names it in errors), which must exist in the table. */
export function existingColumn(fields: readonly FieldLike[] | Field[], path: string, where: string, table: string): string[] {
  const segments = requestedFieldPath(path, where);
  if (!resolveField(fields, segments)) throw new QuiverError("TableColumnNotFound", `column '${path}' does not exist in table '${table}'`);
  return segments;
}
