/**
 * Databases: the default one is the data root itself; each other one is a separate data root inside it, under
 * `.quiver/databases/<name>/`. One opened database per database per process: its catalog (which tables there are)
 * and its tables (what is done with one table's data), over one store and one set of dataset handles.
 */
import "server-only";
import { Catalog } from "@/server/catalog/catalog";
import { TableTurns } from "@/server/catalog/table-turns";
import { Datasets } from "@/server/lance/datasets";
import { openStore } from "@/server/storage/stores";
import { Tables } from "@/server/tables/tables";
import { WriteLedger } from "@/server/tables/write-ledger";
import { decideFromHistory } from "@/server/tables/write-history";
import { recordFinishedBatch } from "@/server/tables/version-authors";
import { finishedBatchEntry } from "@/server/tables/batch-finish";
import { access } from "@/server/auth/access";
import { config } from "@/server/config";
import { QuiverError, invalidInput } from "@/server/errors";
import { OutsideRootError } from "@/server/storage/object-store";
import { childUri, type DataRoot } from "@/server/storage/root";
import { rootStore } from "@/server/storage/stores";
import { engineStorageOptions } from "@/server/storage/read-cache/engine-store";

const DATABASE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const DATABASES = ".quiver/databases/";
/** Written when a database is created, so that it exists on an object store (which has no empty directories). */
const DATABASE_MARKER = ".quiver-database";
const databases = new Map<string, Promise<Database>>();

export const DEFAULT_DATABASE = config.defaultDatabase;

function rootOf(database: string): DataRoot {
  if (database === DEFAULT_DATABASE) return config.root;
  const relative = `${DATABASES}${database}`;
  return config.root.kind === "local"
    ? { kind: "local", uri: childUri(config.root, relative) }
    : { ...config.root, prefix: [config.root.prefix, relative].filter(Boolean).join("/"), uri: childUri(config.root, relative) };
}

export function checkDatabaseName(name: string): string {
  if (!DATABASE_NAME.test(name)) throw invalidInput(`database name '${name.slice(0, 80)}' may contain only letters, digits, '_' and '-' (at most 64)`);
  return name;
}

/** The databases besides the default one: directories of the store (a symbolic link is none, as it could lead out of the root). */
async function otherDatabases(): Promise<string[]> {
  return (await rootStore().listDirectories(DATABASES)).filter((name) => DATABASE_NAME.test(name));
}

async function exists(database: string): Promise<boolean> {
  return database === DEFAULT_DATABASE || (await otherDatabases()).includes(database);
}

export interface Database {
  catalog: Catalog;
  tables: Tables;
}

/** Opens the data root as a database: the store, the handles on its datasets, and the catalog and tables over them. */
export async function openDatabase(root: DataRoot, storageOptions: Record<string, string>): Promise<Database> {
  const store = openStore(root, storageOptions);
  const datasets = new Datasets(root, store, engineStorageOptions(root, storageOptions));
  await datasets.init();
  const turns = new TableTurns();
  const catalog = new Catalog(datasets, store, turns);
  // The ledger reads a stopped write's outcome from the table's records, which it reads through the tables.
  const ledger = new WriteLedger(
    store,
    (claim) => decideFromHistory(tables, claim),
    (hold) => catalog.batchDecision(hold),
  );
  // A batch a reader finished gets the records its own answer would have written.
  const tables: Tables = new Tables(catalog, datasets, store, turns, ledger, (author, members) =>
    Promise.all([recordFinishedBatch(tables, author, members), access().audit.record(finishedBatchEntry(author, members))]),
  );
  return { catalog, tables };
}

export async function databaseFor(name: string = DEFAULT_DATABASE): Promise<Database> {
  let database = databases.get(name);
  if (!database) {
    checkDatabaseName(name);
    // Kept before the first await: requests that arrive together at a fresh process open the database once, so that
    // its tables have one write turn each (two would let two commits of one table run at once in the process).
    database = (async () => {
      if (!(await exists(name))) throw new QuiverError("NamespaceNotFound", `database '${name}' does not exist`);
      return openDatabase(rootOf(name), config.storageOptions);
    })();
    databases.set(name, database);
    const opening = database;
    opening.catch(() => {
      if (databases.get(name) === opening) databases.delete(name);
    });
  }
  return database;
}

export const defaultDatabase = () => databaseFor(DEFAULT_DATABASE);

export async function listDatabases(): Promise<string[]> {
  return [DEFAULT_DATABASE, ...(await otherDatabases()).filter((n) => n !== DEFAULT_DATABASE).sort()];
}

export async function createDatabase(name: string): Promise<{ created: boolean }> {
  checkDatabaseName(name);
  if (await exists(name)) return { created: false };
  let created: boolean;
  try {
    created = null !== (await rootStore().putIfAbsent(`${DATABASES}${name}/${DATABASE_MARKER}`, new Date().toISOString()));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!(err instanceof OutsideRootError) && code !== "ENOTDIR" && code !== "EEXIST") throw err;
    throw new QuiverError("NamespaceAlreadyExists", `the directory of database '${name}' is taken by something that is not a directory of the data root`);
  }
  await databaseFor(name);
  return { created };
}
