/**
 * Databases: the default one is the data root itself; each other one is a separate data root inside it, under
 * `.quiver/databases/<name>/`. One initialised catalog per database per process.
 */
import "server-only";
import { Catalog } from "./catalog";
import { config } from "@/server/config";
import { QuiverError, invalidInput } from "@/server/errors";
import { OutsideRootError } from "@/server/storage/object-store";
import { childUri, type DataRoot } from "@/server/storage/root";
import { rootStore } from "@/server/storage/stores";

const DATABASE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const DATABASES = ".quiver/databases/";
/** Written when a database is created, so that it exists on an object store (which has no empty directories). */
const DATABASE_MARKER = ".quiver-database";
const catalogs = new Map<string, Promise<Catalog>>();

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

export async function catalogFor(database: string = DEFAULT_DATABASE): Promise<Catalog> {
  let catalog = catalogs.get(database);
  if (!catalog) {
    checkDatabaseName(database);
    if (!(await exists(database))) throw new QuiverError("NamespaceNotFound", `database '${database}' does not exist`);
    catalog = (async () => {
      const c = new Catalog(rootOf(database), config.storageOptions);
      await c.init();
      return c;
    })();
    catalogs.set(database, catalog);
    catalog.catch(() => catalogs.delete(database));
  }
  return catalog;
}

export const defaultCatalog = () => catalogFor(DEFAULT_DATABASE);

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
  await catalogFor(name);
  return { created };
}
