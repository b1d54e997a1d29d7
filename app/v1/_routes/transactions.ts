/** The transaction and job routes, for clients that follow up on operations: there is never anything to follow. */
import { QuiverError } from "@/server/errors";
import { route } from "@/server/http/route";
import { joinIdentifier } from "@/lib/identifiers";
import { transactionOperations as ops } from "@/lib/contract/operations/transactions";

/**
 * Every operation of this service finishes before it answers, so none hands out a transaction or job to follow up:
 * whatever transaction or job a client asks about does not exist, and the list of jobs is empty.
 */
const noSuchTransaction = (id: string[]) =>
  new QuiverError(
    "TransactionNotFound",
    `transaction '${joinIdentifier(id)}' does not exist: this service completes every operation before answering and issues no transaction ids`,
  );
const noSuchJob = (id: string) =>
  new QuiverError("TransactionNotFound", `job '${id}' does not exist: this service completes every operation before answering and runs no jobs`);

/** DescribeJob and CancelJob: the request is checked, and the job named does not exist. */
function missingJobRoute(operation: typeof ops.DescribeJob) {
  return route({
    ...operation,
    access: { need: "authenticated" },
    handler: async ({ body }) => {
      throw noSuchJob(body.job_id);
    },
  });
}

export const transactionRoutes = [
  route({
    ...ops.ListJobs,
    access: { need: "authenticated" },
    handler: async () => ({ kind: "json", body: { jobs: [] } }),
  }),
  missingJobRoute(ops.DescribeJob),
  missingJobRoute(ops.CancelJob),
  route({
    ...ops.DescribeTransaction,
    access: { need: "authenticated" },
    handler: async ({ id }) => {
      throw noSuchTransaction(id);
    },
  }),
  route({
    ...ops.AlterTransaction,
    access: { need: "authenticated" },
    handler: async ({ id }) => {
      throw noSuchTransaction(id);
    },
  }),
];
