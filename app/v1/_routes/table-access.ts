/**
 * The access bookkeeping of the catalog's changes, in one place for the single routes and the batch alike, each
 * done once the change has succeeded: whoever declared, registered or created a table becomes its admin (before
 * credentials are vended, which follow the caller's role); a deregistered or dropped table's own grants go, and a
 * dropped namespace's with everything under it, so a later one of the same name starts with none; a renamed table
 * keeps its grants under its new name. A grant that names no database holds for that name in every database, so a
 * change in one database leaves it as it is.
 */
import type { RouteContext } from "@/server/http/route";
import type { TableEntry } from "@/server/catalog/catalog-table";
import { forgetAuthors } from "@/server/tables/version-authors";

type Ctx = RouteContext<unknown, unknown>;

export const tableMade = (ctx: Ctx, id: string[]) => ctx.access.grantDeclarer(ctx.principal, ctx.database, id);

export const tableDeregistered = (ctx: Ctx, id: string[]) => ctx.access.forgetTable(ctx.database, id);

/** A dropped table's records go too: who made each of its versions. */
export async function tableDropped(ctx: Ctx, id: string[], entry: TableEntry) {
  await Promise.all([ctx.access.forgetTable(ctx.database, id), forgetAuthors(ctx.tables.records, entry)]);
}

export const namespaceDropped = (ctx: Ctx, id: string[]) => ctx.access.forgetNamespace(ctx.database, id);

export const tableRenamed = (ctx: Ctx, from: string[], to: string[]) => ctx.access.moveTable(ctx.database, from, to);
