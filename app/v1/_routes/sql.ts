/** SQL over the tables the caller may read (server/sql): run a statement, and the names one may use. */
import { json, route } from "@/server/http/route";
import { runSql, sqlFunctions } from "@/server/sql/run-sql";
import { sqlArrowStream, sqlJson } from "@/server/sql/answer-forms";
import { SavedQueries } from "@/server/sql/saved-queries";
import type { RouteContext } from "@/server/http/route";
import { SQL_KEYWORDS } from "@/lib/sql-keywords";
import { sqlOperations as ops } from "@/lib/contract/operations/sql";
import { readableTables } from "./visibility";

/** A caller's own saved queries: a person's, or a key's. */
const savedOf = (ctx: Pick<RouteContext<unknown, unknown>, "tables" | "principal">) =>
  new SavedQueries(ctx.tables.records, `${ctx.principal.kind}:${ctx.principal.id}`);

/** The most of a statement its audit entry keeps. */
const AUDITED_TEXT = 4_000;

export const sqlRoutes = [
  route({
    ...ops.RunSql,
    // Each table the statement names is checked as it is read: a caller who may read none is refused at once.
    access: { need: "viewer", on: "tables-in-body" },
    heavy: true,
    audited: true,
    handler: async (ctx) => {
      const { query, format, max_rows, truncate } = ctx.body;
      ctx.auditDetail(query.length > AUDITED_TEXT ? `${query.slice(0, AUDITED_TEXT)}…` : query);
      const canRead = readableTables(ctx);
      const answer = await runSql(ctx.tables, {
        sql: query,
        maxRows: max_rows ?? Number.MAX_SAFE_INTEGER,
        truncate: truncate ?? false,
        canRead: async (id) => canRead(id),
        signal: ctx.request.signal,
      });
      if (format === "json") return json(sqlJson(answer));
      return {
        kind: "arrow-stream",
        body: sqlArrowStream(answer),
        headers: { "x-quiver-sql-truncated": String(answer.truncated), "x-quiver-sql-rows": String(answer.table.numRows) },
      };
    },
  }),
  route({
    ...ops.DescribeSqlVocabulary,
    access: { need: "authenticated" },
    handler: async (ctx) => {
      const visible = readableTables(ctx);
      const tables: string[][] = [];
      let token: string | undefined;
      do {
        const page = await ctx.catalog.listAllTables(token, 1000, false, visible);
        tables.push(...page.items);
        token = page.pageToken;
      } while (token && tables.length < 10_000);
      return json({ tables, functions: await sqlFunctions(), keywords: SQL_KEYWORDS });
    },
  }),
  route({
    ...ops.ListSavedQueries,
    access: { need: "authenticated" },
    handler: async (ctx) => json({ queries: await savedOf(ctx).list() }),
  }),
  route({
    ...ops.SaveQuery,
    access: { need: "authenticated" },
    handler: async (ctx) => json(await savedOf(ctx).save(ctx.body)),
  }),
  route({
    ...ops.DeleteSavedQuery,
    access: { need: "authenticated" },
    handler: async (ctx) => {
      await savedOf(ctx).delete(ctx.body.id);
      return json({});
    },
  }),
];
