/**
 * The order the console's grid shows a table's rows in when the user has chosen none. Storage order moves a row to
 * the end of the table each time it is updated, so pages shift under the reader; a key puts each row back in its
 * place. The engine orders by a sort over the whole table, cheap up to a million rows (65 ms for 1,000,000 rows with
 * a 16-float vector on this project's machine), so a larger table stays in storage order unless a column is chosen.
 */
import type { JsonField } from "./arrow-schema";

export const PRIMARY_KEY_METADATA = "lance-schema:unenforced-primary-key";
const KEY_TYPES = /^(u?int(8|16|32|64)|string|large_string|date(32|64):.*|timestamp:.*)$/;
export const DEFAULT_ORDER_MAX_ROWS = 1_000_000;

export interface RowOrder {
  column: string;
  ascending: boolean;
}
export interface DefaultRowOrder extends RowOrder {
  /** Why this column: the table declares it its primary key, or it is named id. */
  reason: "primary key" | "id column";
}

export function defaultRowOrder(fields: JsonField[], numRows: number | undefined): DefaultRowOrder | undefined {
  if (numRows === undefined || numRows > DEFAULT_ORDER_MAX_ROWS) return undefined;
  const orderable = fields.filter((f) => KEY_TYPES.test(f.type.type));
  const key = orderable.find((f) => f.metadata?.[PRIMARY_KEY_METADATA] === "true");
  if (key) return { column: key.name, ascending: true, reason: "primary key" };
  const id = orderable.find((f) => f.name.toLowerCase() === "id");
  return id ? { column: id.name, ascending: true, reason: "id column" } : undefined;
}
