/**
 * Transactions are writes applied once per request id: the id a write's answer gave as `transaction_id` (its key in
 * the write ledger, server/tables/write-ledger.ts) names it, and DescribeTransaction says what became of it, to the
 * caller that made it or an administrator. Every operation of this service finishes before it answers, so none hands
 * out a job to follow up, and a transaction cannot be altered: it is done, or being done.
 */
import { QuiverError } from "@/server/errors";
import { json, route } from "@/server/http/route";
import { joinIdentifier } from "@/lib/identifiers";
import { transactionOperations as ops } from "@/lib/contract/operations/transactions";
import type { Principal } from "@/server/auth/model";
import type { Tables } from "@/server/tables/tables";

const noSuchTransaction = (id: string[]) =>
  new QuiverError(
    "TransactionNotFound",
    `transaction '${joinIdentifier(id)}' does not exist: a transaction id is what a write applied once per request id answered as transaction_id`,
  );
const noSuchJob = (id: string) =>
  new QuiverError("TransactionNotFound", `job '${id}' does not exist: this service completes every operation before answering and runs no jobs`);

/** The write a transaction id names, as the ledger holds it, when the caller may see it (its own, or any to an administrator). */
async function transactionOf(tables: Tables, principal: Principal, id: string[]) {
  const key = id.length === 1 && /^[0-9a-f]{40}$/.test(id[0]) ? id[0] : null;
  const described = key ? await tables.ledger.describe(key) : null;
  const own = described && described.claim.principal.kind === principal.kind && described.claim.principal.id === principal.id;
  if (!described || !(own || principal.admin)) throw noSuchTransaction(id);
  return described;
}

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
    handler: async ({ id, principal, tables }) => {
      const { claim, status, version } = await transactionOf(tables, principal, id);
      const properties: Record<string, string> = { operation: claim.operation, started: claim.time, by: claim.principal.name };
      if (version !== undefined) properties.version = String(version);
      return json({ status, properties });
    },
  }),
  route({
    ...ops.AlterTransaction,
    access: { need: "authenticated" },
    handler: async ({ id, principal, tables }) => {
      const { status } = await transactionOf(tables, principal, id);
      throw new QuiverError(
        "Unsupported",
        `transaction '${joinIdentifier(id)}' is ${status.toLowerCase()}: a transaction of this service is one write, done or being done, and cannot be altered`,
      );
    },
  }),
];
