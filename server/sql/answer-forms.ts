/** A SQL answer in the forms a caller asks for: an Arrow IPC stream with what was read in its metadata, or JSON. */
import "server-only";
import * as arrow from "apache-arrow";
import type { SqlAnswerFacts } from "@/lib/contract/operations/sql";
import type { SqlAnswer } from "./run-sql";

export const SQL_METADATA_KEY = "quiver.sql";

function factsOf(answer: SqlAnswer): SqlAnswerFacts {
  const ms = (x: number) => Math.round(x * 10) / 10;
  return {
    truncated: answer.truncated,
    sources: answer.sources,
    open_ms: ms(answer.openMs),
    plan_ms: ms(answer.planMs),
    read_ms: ms(answer.readMs),
    run_ms: ms(answer.runMs),
  };
}

export function sqlArrowStream(answer: SqlAnswer): Uint8Array {
  const metadata = new Map(answer.table.schema.metadata);
  metadata.set(SQL_METADATA_KEY, JSON.stringify(factsOf(answer)));
  const schema = new arrow.Schema(answer.table.schema.fields, metadata);
  return arrow.tableToIPC(new arrow.Table(schema, answer.table.batches), "stream");
}

const jsonValue = (v: unknown): unknown => {
  if (v === null || v === undefined) return null;
  if (typeof v === "bigint") return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString("base64");
  if (v instanceof Date) return v.toISOString();
  if (typeof v === "number" && !Number.isFinite(v)) return String(v);
  if (v instanceof arrow.Vector) return Array.from(v as Iterable<unknown>, jsonValue);
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<unknown>, jsonValue);
  if (typeof v === "object") return Object.fromEntries(Object.entries((v as { toJSON?: () => object }).toJSON?.() ?? v).map(([k, x]) => [k, jsonValue(x)]));
  return v;
};

export function sqlJson(answer: SqlAnswer) {
  const fields = answer.table.schema.fields;
  const columns = fields.map((f) => answer.table.getChild(f.name)!);
  const dateColumns = fields.map((f) => f.type.typeId === arrow.Type.Date || f.type.typeId === arrow.Type.Timestamp);
  const rows: unknown[][] = [];
  for (let r = 0; r < answer.table.numRows; r++)
    rows.push(
      columns.map((c, i) => {
        const v: unknown = c.get(r);
        return dateColumns[i] && typeof v === "number" ? new Date(v).toISOString() : jsonValue(v);
      }),
    );
  return { ...factsOf(answer), columns: fields.map((f) => ({ name: f.name, type: String(f.type) })), rows };
}
