/**
 * The fields of a request that its schema does not name, and those it names only to refuse. Zod drops unknown keys
 * quietly when it parses; a client that sent one (a search mode, a bound, an option) would get an answer that ignored
 * it without knowing. So every request is walked beside its schema first: what the schema does not know is refused by
 * name (400), and a field of the spec for something this service does not do (the contract's `unsupported`) with 406.
 */
import "server-only";
import type { z } from "zod";
import { unsupportedReason } from "@/lib/contract/common";
import { QuiverError, invalidInput } from "../errors";

/** The parts of Zod's definitions a walk beside a schema reads; everything else is a leaf. */
export interface ZodDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  valueType?: z.ZodType;
  in?: z.ZodType;
  getter?: () => z.ZodType;
  out?: z.ZodType;
  left?: z.ZodType;
  right?: z.ZodType;
}

export const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: ZodDef } })._zod.def;
/** Definitions that wrap one schema and add no field: the walk goes through them. */
export const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"]);
export const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** What a request holds that its schema has no place for, or a place only to refuse. */
export interface FieldIssues {
  /** Paths (`where.a.b`, `where.list[2].c`) of keys the schema does not name. */
  unknown: string[];
  /** Fields set that the schema marks unsupported, with the reason. */
  unsupported: Array<{ path: string; reason: string }>;
}

const holdsSomething = (value: unknown) =>
  value !== undefined && value !== null && !(isPlainObject(value) && Object.keys(value).length === 0) && !(Array.isArray(value) && value.length === 0);

/** Walks `value` beside `schema`, gathering its unknown fields and its unsupported ones. */
export function fieldIssues(schema: z.ZodType, value: unknown, where: string, issues: FieldIssues = { unknown: [], unsupported: [] }): FieldIssues {
  const reason = unsupportedReason(schema);
  if (reason !== undefined) {
    if (holdsSomething(value)) issues.unsupported.push({ path: where, reason });
    return issues;
  }
  const def = defOf(schema);
  if (WRAPPERS.has(def.type)) return value === undefined || value === null ? issues : fieldIssues(def.innerType!, value, where, issues);
  switch (def.type) {
    case "object":
      if (isPlainObject(value))
        for (const [key, inner] of Object.entries(value)) {
          if (Object.hasOwn(def.shape!, key)) fieldIssues(def.shape![key], inner, `${where}.${key}`, issues);
          else issues.unknown.push(`${where}.${key}`);
        }
      return issues;
    case "array":
      if (Array.isArray(value)) value.forEach((item, i) => fieldIssues(def.element!, item, `${where}[${i}]`, issues));
      return issues;
    case "record":
      if (isPlainObject(value)) for (const [key, inner] of Object.entries(value)) fieldIssues(def.valueType!, inner, `${where}.${key}`, issues);
      return issues;
    case "union": {
      // The branches the value parses as decide what belongs (the one that knows most of it); a value that parses as
      // none is the parser's to refuse.
      const candidates = def.options!.filter((option) => option.safeParse(value).success).map((option) => fieldIssues(option, value, where));
      if (candidates.length) {
        const best = candidates.reduce((a, b) => (b.unknown.length < a.unknown.length ? b : a));
        issues.unknown.push(...best.unknown);
        issues.unsupported.push(...best.unsupported);
      }
      return issues;
    }
    case "pipe":
      return fieldIssues(def.in!, value, where, issues);
    case "lazy":
      return fieldIssues(def.getter!(), value, where, issues);
    default:
      return issues;
  }
}

/** Paths of every key in `value` that `schema` has no place for. */
export const unknownFields = (schema: z.ZodType, value: unknown, where: string) => fieldIssues(schema, value, where).unknown;

/** A field the service would not act on is refused by name, never dropped: the client would not know it was ignored. */
export function refuseUnknown(paths: string[]) {
  if (paths.length === 0) return;
  const shown = paths.slice(0, 5).join(", ") + (paths.length > 5 ? ` and ${paths.length - 5} more` : "");
  throw invalidInput(`${shown}: not ${paths.length === 1 ? "a field" : "fields"} this operation takes; refused rather than ignored`);
}

/** A field the spec defines for something this service does not do: 406, with why, before anything is changed. */
export function refuseIssues(issues: FieldIssues) {
  refuseUnknown(issues.unknown);
  const [first] = issues.unsupported;
  if (first) throw new QuiverError("Unsupported", `${first.path}: ${first.reason}`);
}
