/** The batch routes: changes to several tables applied together, all or nothing. */
import { z } from "zod";
import { identifierIn, json, route, type RouteContext } from "@/server/http/route";
import type { Role } from "@/server/auth/model";
import { commitBatch, type BatchOperation, type BatchResult } from "@/server/tables/batch-commit";
import { newTableVersion, versionRanges } from "./versions";
import { declaredAnswer, deregisteredAnswer } from "./tables";
import { operation, batchOperations as ops } from "@/lib/contract/operations/batch";

type Operation = z.output<typeof operation>;

/** The role each kind of change needs on its table, as its own route does. */
const NEED: Record<BatchOperation["kind"], Role> = {
  declare_table: "editor",
  create_table_version: "editor",
  delete_table_versions: "admin",
  deregister_table: "admin",
};

function batchOperation(op: Operation, where: string): BatchOperation {
  if (op.declare_table) {
    const d = op.declare_table;
    return { kind: "declare_table", id: identifierIn(d.id, `${where}.declare_table.id`), location: d.location ?? undefined, properties: d.properties ?? {} };
  }
  if (op.create_table_version) {
    const c = op.create_table_version;
    return { kind: "create_table_version", id: identifierIn(c.id, `${where}.create_table_version.id`), version: newTableVersion(c) };
  }
  if (op.delete_table_versions) {
    const d = op.delete_table_versions;
    return {
      kind: "delete_table_versions",
      id: identifierIn(d.id, `${where}.delete_table_versions.id`),
      ranges: versionRanges(d.ranges),
      branch: d.branch ?? undefined,
    };
  }
  return { kind: "deregister_table", id: identifierIn(op.deregister_table!.id, `${where}.deregister_table.id`) };
}

/** Checks the caller's role on every table of the batch, then commits it. */
async function authorizedBatch(ctx: RouteContext<unknown, unknown>, operationId: string, operations: BatchOperation[]) {
  for (const op of operations) await ctx.requireTableRole(NEED[op.kind], op.id, `${operationId} (${op.kind})`);
  const { results, tidy } = await commitBatch(ctx.catalog, ctx.tables, operations);
  ctx.alongside(tidy);
  results.forEach((result, i) => {
    const op = operations[i];
    if (result.kind === "create_table_version" && op.kind === "create_table_version") {
      ctx.committed({ table: op.id, version: result.version.version, branch: op.version.branch });
    }
  });
  return results;
}

export const batchRoutes = [
  route({
    ...ops.BatchCreateTableVersions,
    access: { need: "editor", on: "tables-in-body" },
    once: { scope: "batch" },
    handler: async (ctx) => {
      const operations = ctx.body.entries.map((e, i): BatchOperation => ({
        kind: "create_table_version",
        id: identifierIn(e.id, `body.entries[${i}].id`),
        version: newTableVersion(e),
      }));
      const results = await authorizedBatch(ctx, "BatchCreateTableVersions", operations);
      return json({ versions: results.map((r) => (r as Extract<BatchResult, { kind: "create_table_version" }>).version) });
    },
  }),
  route({
    ...ops.BatchCommitTables,
    access: { need: "editor", on: "tables-in-body" },
    once: { scope: "batch" },
    handler: async (ctx) => {
      const requested = ctx.body.operations;
      const operations = requested.map((op, i) => batchOperation(op, `body.operations[${i}]`));
      const results = await authorizedBatch(ctx, "BatchCommitTables", operations);
      const answers = [];
      for (const [i, result] of results.entries()) {
        const id = operations[i].id;
        switch (result.kind) {
          case "declare_table":
            answers.push({ declare_table: await declaredAnswer(ctx, id, result, requested[i].declare_table?.vend_credentials) });
            break;
          case "create_table_version":
            answers.push({ create_table_version: { version: result.version } });
            break;
          case "delete_table_versions":
            answers.push({ delete_table_versions: { deleted_count: result.deleted_count } });
            break;
          case "deregister_table":
            answers.push({ deregister_table: await deregisteredAnswer(ctx, id, result.location, result.properties) });
            break;
        }
      }
      return json({ results: answers });
    },
  }),
];
