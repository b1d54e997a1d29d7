/** Field paths in requests (`a.b.c`), and finding the field a path names in a schema. */
import "server-only";
import type { Field } from "apache-arrow";
import { parseFieldPath } from "@/lib/field-path";
import { invalidInput } from "@/server/errors";

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
