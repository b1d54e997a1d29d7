/**
 * What operation made a version. The engine's version list does not say, but each manifest names its transaction
 * file, and the transaction's protobuf carries the operation as a field number (lance's transaction.proto).
 */
import "server-only";
import type { ObjectStore } from "@/server/storage/object-store";
import { fields } from "./version-manifest";

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

/** The operation field of a serialized lance Transaction, or null. */
export function transactionOperation(buf: Buffer): string | null {
  try {
    for (const f of fields(buf, 0, buf.length)) if (OPERATIONS[f.field]) return OPERATIONS[f.field];
  } catch {
    // a truncated or foreign file names no operation
  }
  return null;
}

const TRANSACTION_NAME = /\d+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.txn/;

/** The operation of a version, given its manifest (and, when already known, its transaction file's name). */
export async function versionOperation(store: ObjectStore, location: string, manifestKey: string, transactionFile?: string | null): Promise<string | null> {
  try {
    const name = transactionFile ?? TRANSACTION_NAME.exec((await store.get(manifestKey))?.toString("latin1") ?? "")?.[0];
    if (!name) return null;
    const transaction = await store.get(`${location}/_transactions/${name}`);
    return transaction ? transactionOperation(transaction) : null;
  } catch {
    return null;
  }
}
