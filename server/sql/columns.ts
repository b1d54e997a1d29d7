/**
 * Columns between Lance's Arrow and DuckDB: the DuckDB type a table's column reads as and how a value is handed
 * over (`feedOf`), and the Arrow column a result's DuckDB column answers as (`answerColumn`). Types with no match
 * on the other side travel as text, so that every column can be read.
 */
import "server-only";
import * as arrow from "apache-arrow";
import {
  ARRAY,
  BIGINT,
  BLOB,
  BOOLEAN,
  DATE,
  DOUBLE,
  DuckDBArrayValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBListValue,
  DuckDBStructValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBTypeId,
  FLOAT,
  INTEGER,
  LIST,
  SMALLINT,
  STRUCT,
  TIMESTAMP,
  TIMESTAMPTZ,
  TINYINT,
  UBIGINT,
  UINTEGER,
  USMALLINT,
  UTINYINT,
  VARCHAR,
  type DuckDBType,
  type DuckDBValue,
} from "@duckdb/node-api";

/** How a column of a table reads in SQL: its DuckDB type, what its values are for pushdown, and each value's conversion. */
export interface ColumnFeed {
  name: string;
  type: DuckDBType;
  kind: "number" | "string" | "other";
  value: (v: unknown) => DuckDBValue;
  /** The values' bytes are DuckDB's too (fixed-width numbers): a batch without nulls is copied whole. */
  sameBytes?: boolean;
}

const MS_PER_DAY = 86_400_000;
const text = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : x)));

function feedType(type: arrow.DataType): Omit<ColumnFeed, "name"> {
  const same = (t: DuckDBType, kind: ColumnFeed["kind"] = "number", sameBytes = false) => ({
    type: t,
    kind,
    value: (v: unknown) => v as DuckDBValue,
    sameBytes,
  });
  const is = arrow.DataType;
  if (is.isBool(type)) return same(BOOLEAN, "other");
  if (is.isInt(type)) {
    const byWidth = type.isSigned ? { 8: TINYINT, 16: SMALLINT, 32: INTEGER, 64: BIGINT } : { 8: UTINYINT, 16: USMALLINT, 32: UINTEGER, 64: UBIGINT };
    return same(byWidth[type.bitWidth], "number", true);
  }
  if (is.isFloat(type) && type.precision !== arrow.Precision.HALF) return same(type.precision === arrow.Precision.DOUBLE ? DOUBLE : FLOAT, "number", true);
  if (is.isFloat(type)) return same(FLOAT);
  if (is.isDecimal(type)) return { type: DOUBLE, kind: "other", value: (v) => Number(v) };
  if (is.isUtf8(type) || is.isLargeUtf8(type)) return same(VARCHAR, "string");
  if (is.isBinary(type) || is.isLargeBinary(type) || is.isFixedSizeBinary(type))
    return { type: BLOB, kind: "other", value: (v) => new DuckDBBlobValue(v as Uint8Array) };
  if (is.isDate(type)) return { type: DATE, kind: "other", value: (v) => new DuckDBDateValue(Math.floor(Number(v) / MS_PER_DAY)) };
  if (is.isTimestamp(type)) {
    const micros = (v: unknown) => BigInt(Math.round(Number(v) * 1000));
    return type.timezone
      ? { type: TIMESTAMPTZ, kind: "other", value: (v) => new DuckDBTimestampTZValue(micros(v)) }
      : { type: TIMESTAMP, kind: "other", value: (v) => new DuckDBTimestampValue(micros(v)) };
  }
  if (is.isFixedSizeList(type) || is.isList(type)) {
    const child = feedType(type.children[0].type);
    const items = (v: unknown) => Array.from(v as Iterable<unknown>, (x) => (x === null || x === undefined ? null : child.value(x)));
    if (is.isFixedSizeList(type)) return { type: ARRAY(child.type, type.listSize), kind: "other", value: (v) => new DuckDBArrayValue(items(v)) };
    return { type: LIST(child.type), kind: "other", value: (v) => new DuckDBListValue(items(v)) };
  }
  if (is.isStruct(type)) {
    const fields = type.children.map((f) => ({ name: f.name, ...feedType(f.type) }));
    return {
      type: STRUCT(Object.fromEntries(fields.map((f) => [f.name, f.type]))),
      kind: "other",
      value: (v) => {
        const row = (v as { toJSON(): Record<string, unknown> }).toJSON();
        return new DuckDBStructValue(
          Object.fromEntries(fields.map((f) => [f.name, row[f.name] === null || row[f.name] === undefined ? null : f.value(row[f.name])])),
        );
      },
    };
  }
  return { type: VARCHAR, kind: "other", value: (v) => text(v) };
}

export function feedOf(field: arrow.Field): ColumnFeed {
  return { name: field.name, ...feedType(field.type) };
}

// ------------------------------------------------------------------------------------------------ answers

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A result column as Arrow: its values read from DuckDB (`getColumns`) in their JavaScript form. */
export function answerColumn(type: DuckDBType, values: unknown[]): arrow.Vector {
  const of = (t: arrow.DataType, convert: (v: unknown) => unknown = (v) => v) =>
    arrow.vectorFromArray(
      values.map((v) => (v === null || v === undefined ? null : convert(v))),
      t,
    );
  const direct: Partial<Record<DuckDBTypeId, () => arrow.DataType>> = {
    [DuckDBTypeId.BOOLEAN]: () => new arrow.Bool(),
    [DuckDBTypeId.TINYINT]: () => new arrow.Int8(),
    [DuckDBTypeId.SMALLINT]: () => new arrow.Int16(),
    [DuckDBTypeId.INTEGER]: () => new arrow.Int32(),
    [DuckDBTypeId.BIGINT]: () => new arrow.Int64(),
    [DuckDBTypeId.UTINYINT]: () => new arrow.Uint8(),
    [DuckDBTypeId.USMALLINT]: () => new arrow.Uint16(),
    [DuckDBTypeId.UINTEGER]: () => new arrow.Uint32(),
    [DuckDBTypeId.UBIGINT]: () => new arrow.Uint64(),
    [DuckDBTypeId.FLOAT]: () => new arrow.Float32(),
    [DuckDBTypeId.DOUBLE]: () => new arrow.Float64(),
    [DuckDBTypeId.VARCHAR]: () => new arrow.Utf8(),
  };
  const plain = direct[type.typeId];
  if (plain) return of(plain());
  if (type.typeId === DuckDBTypeId.HUGEINT || type.typeId === DuckDBTypeId.UHUGEINT) {
    // A sum of integers is a HUGEINT: an Int64 column while every value fits one.
    const fits = values.every((v) => v === null || ((v as bigint) >= INT64_MIN && (v as bigint) <= INT64_MAX));
    return fits ? of(new arrow.Int64()) : of(new arrow.Float64(), (v) => Number(v));
  }
  if (type.typeId === DuckDBTypeId.DECIMAL) return of(new arrow.Float64(), (v) => (v as DuckDBDecimalValue).toDouble());
  if (type.typeId === DuckDBTypeId.BLOB) return of(new arrow.Binary(), (v) => (v as DuckDBBlobValue).bytes);
  if (type.typeId === DuckDBTypeId.DATE) return of(new arrow.DateDay(), (v) => new Date((v as DuckDBDateValue).days * MS_PER_DAY));
  if (type.typeId === DuckDBTypeId.TIMESTAMP || type.typeId === DuckDBTypeId.TIMESTAMP_TZ) {
    const zone = type.typeId === DuckDBTypeId.TIMESTAMP_TZ ? "UTC" : undefined;
    return of(new arrow.TimestampMicrosecond(zone), (v) => new Date(Number((v as DuckDBTimestampValue).micros / 1000n)));
  }
  if (type.typeId === DuckDBTypeId.ARRAY || type.typeId === DuckDBTypeId.LIST) {
    const child = type.valueType;
    const numeric = [DuckDBTypeId.FLOAT, DuckDBTypeId.DOUBLE, DuckDBTypeId.INTEGER, DuckDBTypeId.SMALLINT, DuckDBTypeId.TINYINT].includes(child.typeId);
    if (numeric) {
      const item = new arrow.Field("item", child.typeId === DuckDBTypeId.FLOAT ? new arrow.Float32() : new arrow.Float64(), true);
      const listType = type.typeId === DuckDBTypeId.ARRAY ? new arrow.FixedSizeList(type.length, item) : new arrow.List(item);
      return of(listType, (v) => (v as DuckDBListValue | DuckDBArrayValue).items.map((x) => (x === null ? null : Number(x))));
    }
  }
  return of(new arrow.Utf8(), (v) => String(v));
}
