/**
 * Operations of the Lance Namespace spec (and of LanceDB's remote API) that this service does not serve, each with
 * the reason a client is told. They answer 406 with code 0 (Unsupported) whatever they are sent, rather than the 404
 * of a path that means nothing.
 */
import "server-only";
export const REFUSED_OPERATIONS: ReadonlyArray<{ operationId: string; path: RegExp; reason: string }> = [
  {
    operationId: "CloneTable",
    path: /^\/v1\/table\/[^/]+\/clone\/?$/,
    reason:
      "a shallow clone shares the source table's files, which dropping the source would delete from under it, and the engine (@lancedb/lancedb 0.39) has no deep clone",
  },
  {
    operationId: "AlterTableBackfillColumns",
    path: /^\/v1\/table\/[^/]+\/backfill_column\/?$/,
    reason: "virtual and computed columns are not supported",
  },
  {
    operationId: "CreateMaterializedView",
    path: /^\/v1\/materialized_view\/[^/]+\/create\/?$/,
    reason: "materialized views are not supported",
  },
  {
    operationId: "RefreshMaterializedView",
    path: /^\/v1\/(materialized_view|table)\/[^/]+\/refresh\/?$/,
    reason: "materialized views are not supported",
  },
];

export function refusedOperation(pathname: string) {
  return REFUSED_OPERATIONS.find((op) => op.path.test(pathname));
}
