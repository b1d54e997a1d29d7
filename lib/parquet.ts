/**
 * Parquet to Arrow for the upload tab: the Arrow schema a Parquet file's schema reads as (shaped to the table it
 * goes into where Parquet cannot say it: a vector column is a plain list in Parquet), and record batches from the
 * rows hyparquet reads, with their values in the units the schema names.
 */
import {
  Binary,
  Bool,
  DataType,
  DateDay,
  Field,
  FixedSizeBinary,
  FixedSizeList,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  List,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  TimeMicrosecond,
  TimeMillisecond,
  TimeNanosecond,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  TimeUnit,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  vectorFromArray,
  type Vector,
} from "apache-arrow";
import type { SchemaElement, SchemaTree } from "hyparquet";
import type { JsonDataType, JsonField } from "./arrow-schema";
import { timestampVector } from "./arrow-vectors";
import { arrowType, supportsCsv } from "./csv";

const decoder = new TextDecoder();

/**
 * How hyparquet hands over the values whose JavaScript form would lose something: timestamps as the integer the file
 * holds (in its own unit, not a Date cut to milliseconds), dates as epoch milliseconds, JSON and geometry as written.
 */
export const PARQUET_PARSERS = {
  timestampFromMilliseconds: (v: bigint) => v,
  timestampFromMicroseconds: (v: bigint) => v,
  timestampFromNanoseconds: (v: bigint) => v,
  dateFromDays: (days: number) => days * 86_400_000,
  jsonFromBytes: (bytes: Uint8Array) => bytes && decoder.decode(bytes),
  geometryFromBytes: (bytes: Uint8Array) => bytes,
  geographyFromBytes: (bytes: Uint8Array) => bytes,
};

export interface ParquetColumns {
  schema: Schema;
  /** Why the file cannot be read into Arrow as it is. */
  problems: string[];
  /** What changes on the way (a decimal read as a double). */
  notes: string[];
}

/** The table's vector element type by its engine name, where it is a number type (Parquet's numbers are written as it). */
function numericElementType(name: string | undefined): DataType | null {
  if (!name || !supportsCsv(name)) return null;
  const type = arrowType(name);
  return DataType.isFloat(type) || DataType.isInt(type) ? type : null;
}

function integerType(bitWidth: number, signed: boolean): DataType {
  if (bitWidth === 8) return signed ? new Int8() : new Uint8();
  if (bitWidth === 16) return signed ? new Int16() : new Uint16();
  if (bitWidth === 32) return signed ? new Int32() : new Uint32();
  return signed ? new Int64() : new Uint64();
}

const timestampOf = (unit: string, utc: boolean) => {
  const zone = utc ? "UTC" : undefined;
  return unit === "MILLIS" ? new TimestampMillisecond(zone) : unit === "MICROS" ? new TimestampMicrosecond(zone) : new TimestampNanosecond(zone);
};

interface Reading {
  path: string;
  problems: string[];
  notes: string[];
}

function primitiveType(element: SchemaElement, reading: Reading): DataType | null {
  const logical = element.logical_type;
  const converted = element.converted_type;
  if (logical?.type === "DECIMAL" || converted === "DECIMAL") {
    reading.notes.push(`column '${reading.path}' is a decimal in the file and is written as a double`);
    return new Float64();
  }
  if (logical?.type === "INTEGER") return integerType(logical.bitWidth, logical.isSigned);
  if (logical?.type === "TIMESTAMP") return timestampOf(logical.unit, logical.isAdjustedToUTC);
  if (converted === "TIMESTAMP_MILLIS" || converted === "TIMESTAMP_MICROS") return timestampOf(converted.slice(10), true);
  if (logical?.type === "DATE" || converted === "DATE") return new DateDay();
  if (logical?.type === "TIME" || converted === "TIME_MILLIS" || converted === "TIME_MICROS") {
    const unit = logical?.type === "TIME" ? logical.unit : converted!.slice(5);
    return unit === "MILLIS" ? new TimeMillisecond() : unit === "MICROS" ? new TimeMicrosecond() : new TimeNanosecond();
  }
  const intWidth = /^U?INT_(8|16|32|64)$/.exec(converted ?? "");
  if (intWidth) return integerType(Number(intWidth[1]), !converted!.startsWith("U"));
  if (logical?.type === "FLOAT16") return new Float32();
  if (["STRING", "ENUM", "JSON", "UUID"].includes(logical?.type ?? "") || ["UTF8", "ENUM", "JSON"].includes(converted ?? "")) return new Utf8();
  if (logical?.type === "BSON" || converted === "BSON" || converted === "INTERVAL" || logical?.type === "INTERVAL") {
    reading.problems.push(`column '${reading.path}' is ${logical?.type ?? converted}, which the upload cannot read`);
    return null;
  }
  switch (element.type) {
    case "BOOLEAN":
      return new Bool();
    case "INT32":
      return new Int32();
    case "INT64":
      return new Int64();
    case "INT96":
      return new TimestampNanosecond();
    case "FLOAT":
      return new Float32();
    case "DOUBLE":
      return new Float64();
    case "BYTE_ARRAY":
      return new Binary();
    case "FIXED_LEN_BYTE_ARRAY":
      return new FixedSizeBinary(element.type_length ?? 0);
    case undefined:
      reading.problems.push(`column '${reading.path}' has no type the upload knows`);
      return null;
  }
}

/** A list's element: the standard three-level form, or the legacy two-level ones (the repeated field is the element). */
function listElement(list: SchemaTree): SchemaTree {
  const repeated = list.children[0];
  const legacy = repeated.children.length !== 1 || repeated.element.name === "array" || repeated.element.name === `${list.element.name}_tuple`;
  return repeated.children.length === 0 || legacy ? repeated : repeated.children[0];
}

function nodeType(node: SchemaTree, target: JsonDataType | undefined, reading: Reading): DataType | null {
  const { element } = node;
  if (element.logical_type?.type === "MAP" || element.converted_type === "MAP" || element.converted_type === "MAP_KEY_VALUE") {
    reading.problems.push(`column '${reading.path}' is a Parquet map, which the upload cannot write yet: write it as a list of key and value structs`);
    return null;
  }
  if (element.logical_type?.type === "LIST" || element.converted_type === "LIST") {
    const item = listElement(node);
    return listOf(itemType(item, target, reading), item.element.repetition_type !== "REQUIRED", target);
  }
  if (node.children.length > 0) {
    const fields: Field[] = [];
    for (const child of node.children) {
      const field = fieldOf(
        child,
        target?.fields?.find((f) => f.name === child.element.name),
        { ...reading, path: `${reading.path}.${child.element.name}` },
      );
      if (field) fields.push(field);
    }
    return fields.length === node.children.length ? new Struct(fields) : null;
  }
  return primitiveType(element, reading);
}

/** A list's element type: the table's own where the table holds a vector of numbers. */
function itemType(item: SchemaTree, target: JsonDataType | undefined, reading: Reading): DataType | null {
  const read = nodeType(item, target?.fields?.[0]?.type, { ...reading, path: `${reading.path}.item` });
  const element = target?.type === "fixed_size_list" ? numericElementType(target.fields?.[0]?.type.type) : null;
  return read && element && (DataType.isFloat(read) || DataType.isInt(read)) ? element : read;
}

function listOf(item: DataType | null, nullable: boolean, target: JsonDataType | undefined): DataType | null {
  if (!item) return null;
  const child = new Field("item", item, nullable);
  return target?.type === "fixed_size_list" && target.length ? new FixedSizeList(target.length, child) : new List(child);
}

function fieldOf(node: SchemaTree, target: JsonField | undefined, reading: Reading): Field | null {
  const { element } = node;
  const isRepeatedLeaf = element.repetition_type === "REPEATED";
  const type = isRepeatedLeaf
    ? listOf(nodeType({ ...node, element: { ...element, repetition_type: "REQUIRED" } }, target?.type.fields?.[0]?.type, reading), false, target?.type)
    : nodeType(node, target?.type, reading);
  return type ? new Field(element.name, type, element.repetition_type !== "REQUIRED") : null;
}

/** The Arrow schema of a Parquet file's schema tree, shaped to the table's fields where they say more. */
export function parquetArrowSchema(root: SchemaTree, table?: JsonField[]): ParquetColumns {
  const problems: string[] = [];
  const notes: string[] = [];
  const fields = root.children.flatMap((child) => {
    const field = fieldOf(
      child,
      table?.find((f) => f.name === child.element.name),
      { path: child.element.name, problems, notes },
    );
    return field ? [field] : [];
  });
  return { schema: new Schema(fields), problems, notes };
}

const isBig = (type: DataType) => (DataType.isInt(type) && type.bitWidth === 64) || type instanceof TimeMicrosecond || type instanceof TimeNanosecond;

/** Epoch milliseconds of a timestamp the file holds in `unit`: what Arrow's builders take inside lists and structs. */
const timestampMillis = (raw: bigint, unit: TimeUnit) =>
  unit === TimeUnit.MILLISECOND ? Number(raw) : unit === TimeUnit.MICROSECOND ? Number(raw / 1000n) : Number(raw / 1_000_000n);

/** One value as Arrow's builders take it for `type`; `where` names it when it cannot be. */
function arrowValue(type: DataType, value: unknown, where: () => string): unknown {
  if (value === null || value === undefined) return null;
  if (isBig(type)) return typeof value === "bigint" ? value : BigInt(value as number);
  if (DataType.isInt(type) || DataType.isFloat(type)) return Number(value);
  if (DataType.isTimestamp(type)) return typeof value === "bigint" ? timestampMillis(value, type.unit) : value;
  if (DataType.isUtf8(type)) return value instanceof Uint8Array ? decoder.decode(value) : String(value);
  if (DataType.isBinary(type) || DataType.isFixedSizeBinary(type)) return typeof value === "string" ? new TextEncoder().encode(value) : value;
  if (DataType.isList(type) || DataType.isFixedSizeList(type)) {
    const items = Array.from(value as ArrayLike<unknown>);
    if (DataType.isFixedSizeList(type) && items.length !== type.listSize)
      throw new Error(`${where()} has ${items.length} values; the table's column holds ${type.listSize} per row`);
    return items.map((item, i) => arrowValue(type.children[0].type, item, () => `${where()}[${i}]`));
  }
  if (DataType.isStruct(type)) {
    const record = value as Record<string, unknown>;
    return Object.fromEntries(type.children.map((f) => [f.name, arrowValue(f.type, record[f.name], () => `${where()}.${f.name}`)]));
  }
  return value;
}

/** A top-level timestamp column keeps every digit of its unit. */
function columnVector(field: Field, values: unknown[], firstRow: number): Vector {
  if (DataType.isTimestamp(field.type)) return timestampVector(field.type, values as Array<bigint | null>);
  return vectorFromArray(
    values.map((v, row) => arrowValue(field.type, v, () => `row ${firstRow + row + 1}, column '${field.name}'`)),
    field.type,
  );
}

/** A record batch of rows as hyparquet reads them (objects by column name), in `schema`'s types. */
export function parquetRowsToBatch(schema: Schema, rows: Array<Record<string, unknown>>, firstRow: number): RecordBatch {
  const children = schema.fields.map(
    (field) =>
      columnVector(
        field,
        rows.map((r) => r[field.name]),
        firstRow,
      ).data[0],
  );
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children }));
}
