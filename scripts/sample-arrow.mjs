#!/usr/bin/env node
// Writes an Arrow IPC stream of sample rows (id int64, name utf8, score float64) to stdout.
// Usage: node scripts/sample-arrow.mjs FROM TO [SCORE_OFFSET] > rows.arrows
import { Float64, Int64, Table, tableToIPC, Utf8, vectorFromArray } from "apache-arrow";

const [from = "0", to = "10", offset = "0"] = process.argv.slice(2);
const ids = Array.from({ length: Number(to) - Number(from) }, (_, i) => Number(from) + i);
const table = new Table({
  id: vectorFromArray(ids.map(BigInt), new Int64()),
  name: vectorFromArray(
    ids.map((i) => `item-${i}`),
    new Utf8(),
  ),
  score: vectorFromArray(
    ids.map((i) => i * 0.5 + Number(offset)),
    new Float64(),
  ),
});
process.stdout.write(tableToIPC(table, "stream"));
