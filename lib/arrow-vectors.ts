/** Arrow vectors that apache-arrow's builders cannot make exactly. */
import { Int64, makeData, makeVector, vectorFromArray, type Timestamp, type Vector } from "apache-arrow";

/**
 * A timestamp column from integers in its own unit. apache-arrow's builders take epoch milliseconds as a number, so a
 * microsecond or nanosecond value would lose its last digits (and a BigInt is refused): the integers are laid out as
 * 64-bit values and read as the timestamp they are.
 */
export function timestampVector(type: Timestamp, values: ReadonlyArray<bigint | number | null | undefined>): Vector<Timestamp> {
  const raw = vectorFromArray(
    values.map((v) => (v === null || v === undefined ? null : BigInt(v))),
    new Int64(),
  ).data[0];
  return makeVector(makeData({ type, length: raw.length, nullCount: raw.nullCount, nullBitmap: raw.nullBitmap, data: raw.values }));
}
