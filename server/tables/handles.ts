/**
 * Opening a table for an operation that needs its data: the table must exist and have been written (a declared
 * table has nothing to read or change yet, and the refusal names the operation).
 */
import "server-only";
import type { Catalog, Id, ReadAt } from "@/server/catalog/catalog";

/** The latest version of the table (or of a branch), to change it. */
export async function dataHandle(catalog: Catalog, id: Id, what: string, branch?: string) {
  const entry = await catalog.resolve(id);
  await catalog.requireData(entry, what);
  return { entry, table: await catalog.writeHandle(entry, branch) };
}

/** The table at a version, tag or branch, to read it. */
export async function dataAt(catalog: Catalog, id: Id, what: string, at: ReadAt) {
  const entry = await catalog.resolve(id);
  await catalog.requireData(entry, what);
  return { entry, table: await catalog.readHandle(entry, at) };
}
