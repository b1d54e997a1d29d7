/**
 * What made a version. The engine's version list does not say, but each manifest names its transaction file, and
 * the transaction's protobuf carries the operation (lance's transaction.proto) with what it changed. Lance's names
 * are the engine's view ("Project" for a column rename, "Merge" for added columns, "Update" for a merge insert), so
 * each is also told as what the user did, from the transaction and, where columns changed, the schema before it.
 */
import "server-only";
import type { ObjectStore } from "@/server/storage/object-store";
import { fromBinary } from "@bufbuild/protobuf";
import { TransactionSchema, type DataFragment, type Field, type Transaction } from "./proto/lance_format_pb";

export interface VersionOperation {
  /** Lance's name of the operation (`CreateIndex`). */
  operation: string;
  /** What the user did, in their words (`Create index id_idx`). */
  action: string;
  /** The rows an append or an overwrite wrote. */
  rows?: number;
}

/** Lance's operations a compaction commits (fragment ids reserved, files rewritten), which no user write makes and which change no row. */
export const COMPACTION_OPERATIONS = new Set(["ReserveFragments", "Rewrite"]);

/** A column of a schema as the version manifests list it. */
export type SchemaField = Pick<Field, "name" | "id" | "parentId">;

function parseTransaction(buf: Buffer): Transaction | null {
  try {
    return fromBinary(TransactionSchema, buf);
  } catch {
    // a truncated or foreign file names no operation
    return null;
  }
}

const lanceName = (kind: string) => kind[0].toUpperCase() + kind.slice(1);

/** The operation a serialized Lance transaction records, by Lance's name for it (`CreateIndex`), or null. */
export function transactionOperation(buf: Buffer): string | null {
  const kind = parseTransaction(buf)?.operation.case;
  return kind ? lanceName(kind) : null;
}

const rowsIn = (fragments: DataFragment[]) => fragments.reduce((sum, f) => sum + Number(f.physicalRows), 0);
const count = (n: number, what: string) => `${n.toLocaleString("en-US")} ${what}${n === 1 ? "" : "s"}`;
const list = (names: string[]) => names.join(", ");

/** Each column's dotted path by its id. */
function pathsById(fields: SchemaField[]): Map<number, string> {
  const byId = new Map(fields.map((f) => [f.id, f]));
  const paths = new Map<number, string>();
  const pathOf = (field: SchemaField): string => {
    const known = paths.get(field.id);
    if (known !== undefined) return known;
    const parent = byId.get(field.parentId);
    const path = parent && parent.id !== field.id ? `${pathOf(parent)}.${field.name}` : field.name;
    paths.set(field.id, path);
    return path;
  };
  for (const field of fields) pathOf(field);
  return paths;
}

/** Columns that went, were renamed or came, between two schemas; nested columns of a changed one are not repeated. */
function schemaChanges(before: SchemaField[], after: SchemaField[]): string[] {
  const old = pathsById(before);
  const now = pathsById(after);
  const oldNames = new Set(old.values());
  const nowNames = new Set(now.values());
  const oldById = new Map(before.map((f) => [f.id, f]));
  const topmost = (fields: SchemaField[], keep: (f: SchemaField) => boolean) => {
    const kept = new Set(fields.filter(keep).map((f) => f.id));
    return fields.filter((f) => kept.has(f.id) && !kept.has(f.parentId));
  };
  const told = (verb: string, fields: SchemaField[], paths: Map<number, string>) =>
    fields.length ? [`${verb} ${fields.length === 1 ? "column" : "columns"} ${list(fields.map((f) => paths.get(f.id)!))}`] : [];
  const renamed = after.filter((f) => oldById.has(f.id) && oldById.get(f.id)!.name !== f.name);
  return [
    ...told(
      "Drop",
      topmost(before, (f) => !now.has(f.id) && !nowNames.has(old.get(f.id)!)),
      old,
    ),
    ...renamed.map((f) => `Rename column ${old.get(f.id)} to ${f.name}`),
    ...told(
      "Change the type of",
      topmost(after, (f) => !old.has(f.id) && oldNames.has(now.get(f.id)!)),
      now,
    ),
    ...told(
      "Add",
      topmost(after, (f) => !old.has(f.id) && !oldNames.has(now.get(f.id)!)),
      now,
    ),
  ];
}

/**
 * What the user did, from a transaction. `version` is the version it made, `fields` that version's schema, and
 * `fieldsBefore` the previous version's, where it can be read (a column change is then told exactly).
 */
export function describeTransaction(transaction: Transaction, version: number, fields: SchemaField[], fieldsBefore: SchemaField[] | null): string {
  const { operation } = transaction;
  switch (operation.case) {
    case "append":
      return `Insert ${count(rowsIn(operation.value.fragments), "row")}`;
    case "overwrite":
      return `${version === 1 ? "Create the table with" : "Overwrite the table with"} ${count(rowsIn(operation.value.fragments), "row")}`;
    case "delete":
      return operation.value.predicate ? `Delete rows where ${operation.value.predicate}` : "Delete rows";
    case "update": {
      const { fieldsModified, updateMode, newFragments } = operation.value;
      if (updateMode === 1 && fieldsModified.length) {
        const paths = pathsById(fields);
        return `Update ${fieldsModified.length === 1 ? "column" : "columns"} ${list(fieldsModified.map((id) => paths.get(id) ?? `#${id}`))}`;
      }
      return `Update or merge-insert rows (${count(rowsIn(newFragments), "row")} written)`;
    }
    case "createIndex": {
      const created = operation.value.newIndices.map((i) => i.name);
      const removed = operation.value.removedIndices.map((i) => i.name);
      const label = (names: string[]) => `${names.length === 1 ? "index" : "indices"} ${list([...new Set(names)])}`;
      if (created.length === 0) return `Drop ${label(removed)}`;
      if (removed.length === 0) return `Create ${label(created)}`;
      return `Rebuild or optimise ${label(created)}`;
    }
    case "rewrite": {
      const { groups } = operation.value;
      const before = operation.value.oldFragments.length + groups.reduce((n, g) => n + g.oldFragments.length, 0);
      const after = operation.value.newFragments.length + groups.reduce((n, g) => n + g.newFragments.length, 0);
      return `Compact files (${count(before, "fragment")} into ${after})`;
    }
    case "merge":
    case "project": {
      const changes = fieldsBefore ? schemaChanges(fieldsBefore, operation.value.schema) : [];
      if (changes.length) return changes.join("; ");
      return operation.case === "merge" ? "Add or rewrite columns" : "Drop or rename columns";
    }
    case "restore":
      return `Restore version ${operation.value.version}`;
    case "updateConfig":
      return "Change the table's configuration or metadata";
    case "dataReplacement":
      return "Replace column data";
    case "reserveFragments":
      return "Reserve fragment ids for a compaction";
    case "clone":
      return "Clone the table";
    case "updateBases":
      return "Change the table's base paths";
    case "updateMemWalState":
      return "Update the write-ahead log state";
    case "dataOverlay":
      return "Overlay data";
    case "userOperation":
      return "A user-defined operation";
    case undefined:
      return "Unknown operation";
  }
}

const TRANSACTION_NAME = /\d+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.txn/;

/**
 * The operation of a version, given its manifest (and, when already known, its transaction file's name), or null
 * where no transaction can be read; `fieldsBefore` reads the previous version's schema only when a column changed.
 */
export async function versionOperation(
  store: ObjectStore,
  location: string,
  manifest: { key: string; version: number; fields: SchemaField[]; transactionFile?: string | null; inlineTransaction?: Buffer | null },
  fieldsBefore: () => Promise<SchemaField[] | null>,
): Promise<VersionOperation | null> {
  const transactionFile = async () => {
    const name = manifest.transactionFile ?? TRANSACTION_NAME.exec((await store.get(manifest.key))?.toString("latin1") ?? "")?.[0];
    return name ? store.get(`${location}/_transactions/${name}`) : null;
  };
  try {
    const content = manifest.inlineTransaction ?? (await transactionFile());
    const transaction = content ? parseTransaction(content) : null;
    const kind = transaction?.operation.case;
    if (!transaction || !kind) return null;
    const before = kind === "merge" || kind === "project" ? await fieldsBefore().catch(() => null) : null;
    const written = kind === "append" || kind === "overwrite" ? { rows: rowsIn(transaction.operation.value.fragments) } : {};
    return { operation: lanceName(kind), action: describeTransaction(transaction, manifest.version, manifest.fields, before), ...written };
  } catch {
    return null;
  }
}
