/**
 * What operation made a version. The engine's version list does not say, but each manifest names its transaction
 * file, and the transaction's protobuf carries the operation as a field number (lance's transaction.proto).
 */
import { promises as fs } from "node:fs";
import path from "node:path";

const OPERATIONS: Record<number, string> = {
  100: "Append",
  101: "Delete",
  102: "Overwrite",
  103: "CreateIndex",
  104: "Rewrite",
  105: "Merge",
  106: "Restore",
  107: "ReserveFragments",
  108: "Update",
  109: "Project",
  110: "UpdateConfig",
  111: "DataReplacement",
  112: "UpdateMemWalState",
  113: "Clone",
  114: "UpdateBases",
  115: "DataOverlay",
  116: "UserOperation",
};

function readVarint(buf: Buffer, pos: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    if (pos >= buf.length) throw new Error("truncated varint");
    const byte = buf[pos++];
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return [value, pos];
    shift += 7;
  }
}

/** The operation field of a serialized lance Transaction, or null. */
export function transactionOperation(buf: Buffer): string | null {
  let pos = 0;
  try {
    while (pos < buf.length) {
      const [key, next] = readVarint(buf, pos);
      pos = next;
      const field = Math.floor(key / 8);
      const wire = key & 7;
      if (OPERATIONS[field]) return OPERATIONS[field];
      if (wire === 0) pos = readVarint(buf, pos)[1];
      else if (wire === 1) pos += 8;
      else if (wire === 5) pos += 4;
      else if (wire === 2) {
        const [length, after] = readVarint(buf, pos);
        pos = after + length;
      } else return null;
    }
  } catch {
    return null;
  }
  return null;
}

const TRANSACTION_NAME = /\d+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.txn/;

/** The operation of a version, given its manifest (and, when already known, its transaction file's name). */
export async function versionOperation(datasetDir: string, manifestPath: string, transactionFile?: string | null): Promise<string | null> {
  try {
    const name = transactionFile ?? TRANSACTION_NAME.exec((await fs.readFile(manifestPath)).toString("latin1"))?.[0];
    if (!name) return null;
    return transactionOperation(await fs.readFile(path.join(datasetDir, "_transactions", name)));
  } catch {
    return null;
  }
}
