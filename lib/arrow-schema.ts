/**
 * Lance's JSON form of an Arrow schema (`JsonArrowSchema`), used by describe responses, alter_columns requests
 * and the console's schema views. Type names follow the Lance engine's vocabulary (`double`, `string`, ...);
 * the Lance Namespace vocabulary (`float64`, `utf8`, ...) is accepted on input and translated.
 */

export interface JsonDataType {
  type: string;
  fields?: JsonField[];
  length?: number;
}

export interface JsonField {
  name: string;
  type: JsonDataType;
  nullable: boolean;
  metadata?: Record<string, string>;
}

export interface JsonSchema {
  fields: JsonField[];
  metadata?: Record<string, string>;
}

/** Structural view of apache-arrow types, so that either build of apache-arrow (ESM or CJS) can be converted. */
interface ArrowTypeLike {
  typeId: number;
  bitWidth?: number;
  isSigned?: boolean;
  precision?: number;
  unit?: number;
  timezone?: string | null;
  scale?: number;
  byteWidth?: number;
  listSize?: number;
  children?: ArrowFieldLike[];
  dictionary?: ArrowTypeLike;
}
interface ArrowFieldLike {
  name: string;
  type: ArrowTypeLike;
  nullable: boolean;
  metadata: Map<string, string>;
}
interface ArrowSchemaLike {
  fields: ArrowFieldLike[];
  metadata: Map<string, string>;
}

const TIME_UNITS = ["s", "ms", "us", "ns"];

export function dataTypeToJson(t: ArrowTypeLike): JsonDataType {
  switch (t.typeId) {
    case 1:
      return { type: "null" };
    case 6:
      return { type: "bool" };
    case 2:
      return { type: `${t.isSigned ? "" : "u"}int${t.bitWidth}` };
    case 3:
      return { type: ["halffloat", "float", "double"][t.precision ?? 2] };
    case 4:
      return { type: "binary" };
    case 5:
      return { type: "string" };
    case 19:
      return { type: "large_binary" };
    case 20:
      return { type: "large_string" };
    case 7:
      return { type: `decimal:${t.bitWidth ?? 128}:${t.precision}:${t.scale}` };
    case 8:
      return { type: t.unit === 0 ? "date32:day" : "date64:ms" };
    case 9:
      return { type: `time${t.bitWidth ?? 64}:${TIME_UNITS[t.unit ?? 0]}` };
    case 10:
      return { type: `timestamp:${TIME_UNITS[t.unit ?? 0]}:${t.timezone ?? "-"}` };
    case 18:
      return { type: `duration:${TIME_UNITS[t.unit ?? 0]}` };
    case 11:
      return { type: "interval" };
    case 15:
      return { type: "fixed_size_binary", length: t.byteWidth };
    case 12:
      return { type: "list", fields: (t.children ?? []).map(fieldToJson) };
    case 16:
      return { type: "fixed_size_list", fields: (t.children ?? []).map(fieldToJson), length: t.listSize };
    case 13:
      return { type: "struct", fields: (t.children ?? []).map(fieldToJson) };
    case 17:
      return { type: "map", fields: (t.children ?? []).map(fieldToJson) };
    case -1:
      return dataTypeToJson(t.dictionary!);
    default:
      return { type: "unknown" };
  }
}

export function fieldToJson(f: ArrowFieldLike): JsonField {
  const field: JsonField = { name: f.name, type: dataTypeToJson(f.type), nullable: f.nullable };
  if (f.metadata && f.metadata.size > 0) field.metadata = Object.fromEntries(f.metadata);
  return field;
}

export function schemaToJson(schema: ArrowSchemaLike): JsonSchema {
  const out: JsonSchema = { fields: schema.fields.map(fieldToJson) };
  if (schema.metadata && schema.metadata.size > 0) out.metadata = Object.fromEntries(schema.metadata);
  return out;
}

/** Namespace-vocabulary names and common aliases, mapped to the engine's names. */
const TYPE_ALIASES: Record<string, string> = {
  boolean: "bool",
  float16: "halffloat",
  float32: "float",
  float64: "double",
  utf8: "string",
  large_utf8: "large_string",
  date32: "date32:day",
  date64: "date64:ms",
};

/** Scalar type names the engine understands in alter_columns. */
export const SCALAR_TYPES = [
  "bool",
  "int8",
  "int16",
  "int32",
  "int64",
  "uint8",
  "uint16",
  "uint32",
  "uint64",
  "halffloat",
  "float",
  "double",
  "string",
  "large_string",
  "binary",
  "large_binary",
  "date32:day",
  "date64:ms",
];

/** Translates a data type from either JSON vocabulary into the engine's. Throws on a malformed object. */
export function normalizeDataType(input: unknown): JsonDataType {
  if (!input || typeof input !== "object" || typeof (input as { type?: unknown }).type !== "string") {
    throw new Error("data_type must be an object with a string 'type'");
  }
  const raw = input as { type: string; fields?: unknown; length?: unknown };
  const lowered = raw.type.trim().toLowerCase();
  const name = TYPE_ALIASES[lowered] ?? lowered;
  const out: JsonDataType = { type: name };
  if (raw.fields !== undefined) {
    if (!Array.isArray(raw.fields)) throw new Error("data_type.fields must be an array");
    out.fields = raw.fields.map((f) => {
      if (!f || typeof f !== "object" || typeof f.name !== "string") throw new Error("each data_type field needs a name");
      return { name: f.name, type: normalizeDataType(f.type), nullable: f.nullable !== false, ...(f.metadata ? { metadata: f.metadata } : {}) };
    });
  }
  if (raw.length !== undefined) {
    if (typeof raw.length !== "number" || !Number.isInteger(raw.length) || raw.length < 0) {
      throw new Error("data_type.length must be a non-negative integer");
    }
    out.length = raw.length;
  }
  return out;
}

/** The integer widths, float widths and string kinds the engine can cast between without changing the family. */
const CAST_FAMILIES: string[][] = [
  ["int8", "int16", "int32", "int64"],
  ["uint8", "uint16", "uint32", "uint64"],
  ["halffloat", "float", "double"],
  ["string", "large_string"],
  ["binary", "large_binary"],
];

export function castTargets(type: string): string[] {
  return CAST_FAMILIES.find((family) => family.includes(type))?.filter((t) => t !== type) ?? [];
}
