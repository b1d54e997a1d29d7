import { z } from "zod";
import { QuiverError } from "@/server/errors";
import { route } from "@/server/http/route";
import { context, delimiterQuery, requestBase } from "@/lib/contract/common";
import { joinIdentifier } from "@/lib/identifiers";

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
function missingJobRoute(operationId: string, action: "describe" | "cancel") {
  return route({
    operationId,
    summary: `LanceDB's remote API: ${action} a background job (this service runs none: always not found)`,
    group: "Transactions",
    methods: ["POST"],
    path: `/v1/jobs/${action}`,
    access: { need: "authenticated" },
    body: { kind: "json", schema: z.object({ job_id: z.string().min(1) }) },
    response: z.object({}),
    handler: async ({ body }) => {
      throw noSuchJob(body.job_id);
    },
  });
}

const status = z.enum(["Queued", "Running", "Succeeded", "Failed", "Canceled"]);
const mode = z.enum(["Overwrite", "Fail", "Skip"]);

export const transactionRoutes = [
  route({
    operationId: "ListJobs",
    summary: "LanceDB's remote API: list background jobs (this service runs none: always empty)",
    group: "Transactions",
    methods: ["POST", "GET"],
    path: "/v1/jobs/list",
    access: { need: "authenticated" },
    body: { kind: "json", schema: z.object({}) },
    response: z.object({ jobs: z.array(z.object({})) }),
    handler: async () => ({ kind: "json", body: { jobs: [] } }),
  }),
  missingJobRoute("DescribeJob", "describe"),
  missingJobRoute("CancelJob", "cancel"),
  route({
    operationId: "DescribeTransaction",
    summary: "Describe a transaction (this service issues none: always TransactionNotFound)",
    group: "Transactions",
    methods: ["POST"],
    path: "/v1/transaction/{id}/describe",
    access: { need: "authenticated" },
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(requestBase) },
    response: z.object({ status, properties: z.record(z.string(), z.string()).optional(), context }),
    handler: async ({ id }) => {
      throw noSuchTransaction(id);
    },
  }),
  route({
    operationId: "AlterTransaction",
    summary: "Alter a transaction (this service issues none: always TransactionNotFound)",
    group: "Transactions",
    methods: ["POST"],
    path: "/v1/transaction/{id}/alter",
    access: { need: "authenticated" },
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        ...requestBase,
        actions: z
          .array(
            z.object({
              setStatusAction: z.object({ status }).nullish(),
              setPropertyAction: z.object({ key: z.string(), value: z.string(), mode: mode.nullish() }).nullish(),
              unsetPropertyAction: z.object({ key: z.string(), mode: mode.nullish() }).nullish(),
            }),
          )
          .min(1),
      }),
    },
    response: z.object({ status, properties: z.record(z.string(), z.string()).optional(), context }),
    handler: async ({ id }) => {
      throw noSuchTransaction(id);
    },
  }),
];
