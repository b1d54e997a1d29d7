/**
 * Opening a table for an operation that needs its data: the table must exist and have been written (a declared
 * table has nothing to read or change yet, and the refusal names the operation). Whether it was written is asked
 * of the store only when the engine could not open it (Catalog.onWritten), which spares every operation on a
 * written table one read.
 */
import "server-only";
import type { Catalog, Id, ReadAt } from "@/server/catalog/catalog";
import type { TableEntry } from "@/server/catalog/catalog-table";
import type { NativeTable } from "@/server/lance/native";

/** The latest version of the table (or of a branch), to change it. */
export async function dataHandle(catalog: Catalog, id: Id, what: string, branch?: string) {
  const entry = await catalog.resolve(id);
  return { entry, table: await catalog.onWritten(entry, what, () => catalog.writeHandle(entry, branch)) };
}

/** The table at a version, tag or branch, to read it. */
export async function dataAt(catalog: Catalog, id: Id, what: string, at: ReadAt) {
  const entry = await catalog.resolve(id);
  return { entry, table: await catalog.onWritten(entry, what, () => catalog.readHandle(entry, at)) };
}

/**
 * Reads the table at a version, tag or branch with `read`, which runs while the catalog is checked (see
 * `Catalog.resolveWith`): a read that changes nothing pays for one round trip to the store where it would pay two.
 */
export async function readAt<T>(catalog: Catalog, id: Id, what: string, at: ReadAt, read: (table: NativeTable, entry: TableEntry) => Promise<T>): Promise<T> {
  const { value } = await catalog.resolveWith(id, async (entry) => read(await catalog.onWritten(entry, what, () => catalog.readHandle(entry, at)), entry));
  return value;
}
