/**
 * What operation made a version. The engine's version list does not say, but each manifest names its transaction
 * file, and the transaction's protobuf carries the operation as a field number (lance's transaction.proto).
 */
import "server-only";
import type { ObjectStore } from "@/server/storage/object-store";
import { fromBinary } from "@bufbuild/protobuf";
import { TransactionSchema } from "./proto/lance_format_pb";

/** The operation a serialized Lance transaction records, by Lance's name for it (`CreateIndex`), or null. */
export function transactionOperation(buf: Buffer): string | null {
  try {
    const operation = fromBinary(TransactionSchema, buf).operation.case;
    return operation ? operation[0].toUpperCase() + operation.slice(1) : null;
  } catch {
    // a truncated or foreign file names no operation
    return null;
  }
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
