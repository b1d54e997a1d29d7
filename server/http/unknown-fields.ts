/**
 * The fields of a request that its schema does not name. Zod drops such keys quietly when it parses; a client that
 * sent one (a search mode, a bound, an option) would get an answer that ignored it without knowing. So every request
 * is walked beside its schema first, and what the schema does not know is refused by name.
 */
import "server-only";
import type { z } from "zod";
import { invalidInput } from "../errors";

/** The parts of Zod's definitions the walk reads; everything else is a leaf. */
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  valueType?: z.ZodType;
  in?: z.ZodType;
  getter?: () => z.ZodType;
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;
const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"]);
const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Paths (`where.a.b`, `where.list[2].c`) of every key in `value` that `schema` has no place for. */
export function unknownFields(schema: z.ZodType, value: unknown, where: string): string[] {
  const def = defOf(schema);
  if (WRAPPERS.has(def.type)) return value === undefined || value === null ? [] : unknownFields(def.innerType!, value, where);
  switch (def.type) {
    case "object": {
      if (!isPlainObject(value)) return [];
      const shape = def.shape!;
      return Object.entries(value).flatMap(([key, inner]) =>
        Object.hasOwn(shape, key) ? unknownFields(shape[key], inner, `${where}.${key}`) : [`${where}.${key}`],
      );
    }
    case "array":
      return Array.isArray(value) ? value.flatMap((item, i) => unknownFields(def.element!, item, `${where}[${i}]`)) : [];
    case "record":
      return isPlainObject(value) ? Object.entries(value).flatMap(([key, inner]) => unknownFields(def.valueType!, inner, `${where}.${key}`)) : [];
    case "union": {
      // The branches the value parses as decide what belongs (the one that knows most of it); a value that parses as
      // none is the parser's to refuse.
      const candidates = def.options!.filter((option) => option.safeParse(value).success).map((option) => unknownFields(option, value, where));
      return candidates.length ? candidates.reduce((best, next) => (next.length < best.length ? next : best)) : [];
    }
    case "pipe":
      return unknownFields(def.in!, value, where);
    case "lazy":
      return unknownFields(def.getter!(), value, where);
    default:
      return [];
  }
}

/** A field the service would not act on is refused by name, never dropped: the client would not know it was ignored. */
export function refuseUnknown(paths: string[]) {
  if (paths.length === 0) return;
  const shown = paths.slice(0, 5).join(", ") + (paths.length > 5 ? ` and ${paths.length - 5} more` : "");
  throw invalidInput(`${shown}: not ${paths.length === 1 ? "a field" : "fields"} this operation takes; refused rather than ignored`);
}
