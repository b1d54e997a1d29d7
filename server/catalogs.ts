/**
 * Databases: the default one is the data root itself; each other one is a separate data root inside it.
 * One initialised catalog per database per process.
 */
import { promises as fs } from "node:fs";
import path from "node:path";
import { Catalog } from "./catalog";
import { config } from "./config";
import { QuiverError, invalidInput } from "./errors";

const DATABASE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const catalogs = new Map<string, Promise<Catalog>>();

export const DEFAULT_DATABASE = config.defaultDatabase;

function rootOf(database: string): string {
  return database === DEFAULT_DATABASE ? config.root : path.join(config.root, ".quiver", "databases", database);
}

export function checkDatabaseName(name: string): string {
  if (!DATABASE_NAME.test(name)) throw invalidInput(`database name '${name.slice(0, 80)}' may contain only letters, digits, '_' and '-' (at most 64)`);
  return name;
}

/** Whether a database's directory is there: a real directory, as a symbolic link could lead out of the data root. */
async function exists(database: string): Promise<boolean> {
  if (database === DEFAULT_DATABASE) return true;
  try {
    return (await fs.lstat(rootOf(database))).isDirectory();
  } catch {
    return false;
  }
}

export async function catalogFor(database: string = DEFAULT_DATABASE): Promise<Catalog> {
  let catalog = catalogs.get(database);
  if (!catalog) {
    checkDatabaseName(database);
    if (!(await exists(database))) throw new QuiverError("NamespaceNotFound", `database '${database}' does not exist`);
    catalog = (async () => {
      const c = new Catalog(rootOf(database));
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
  let others: string[] = [];
  try {
    const entries = await fs.readdir(path.join(config.root, ".quiver", "databases"), { withFileTypes: true });
    others = entries.filter((e) => e.isDirectory() && DATABASE_NAME.test(e.name)).map((e) => e.name);
  } catch {
    // no other databases yet
  }
  return [DEFAULT_DATABASE, ...others.filter((n) => n !== DEFAULT_DATABASE).sort()];
}

export async function createDatabase(name: string): Promise<{ created: boolean }> {
  checkDatabaseName(name);
  if (await exists(name)) return { created: false };
  await fs.mkdir(path.dirname(rootOf(name)), { recursive: true });
  try {
    await fs.mkdir(rootOf(name));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    if (await exists(name)) return { created: false };
    throw new QuiverError("NamespaceAlreadyExists", `the directory of database '${name}' is taken by something that is not a directory`);
  }
  await catalogFor(name);
  return { created: true };
}
