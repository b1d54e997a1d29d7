/** Transactions and jobs: every operation finishes before it answers, so there are none to follow. */
import { z } from "zod";
import { context, delimiterQuery, requestBase } from "../common";
import { defineOperation } from "../operation";

const status = z.enum(["Queued", "Running", "Succeeded", "Failed", "Canceled"]);
const mode = z.enum(["Overwrite", "Fail", "Skip"]);

/** DescribeJob and CancelJob: LanceDB's remote API for background jobs, of which this service runs none. */
const missingJobOperation = (operationId: string, action: "describe" | "cancel") =>
  defineOperation({
    operationId,
    summary: `LanceDB's remote API: ${action} a background job (this service runs none: always not found)`,
    group: "Transactions",
    methods: ["POST"],
    path: `/v1/jobs/${action}`,
    body: { kind: "json", schema: z.object({ job_id: z.string().min(1) }) },
    response: z.object({}),
  });

export const transactionOperations = {
  DescribeJob: missingJobOperation("DescribeJob", "describe"),
  CancelJob: missingJobOperation("CancelJob", "cancel"),
  ListJobs: defineOperation({
    operationId: "ListJobs",
    summary: "LanceDB's remote API: list background jobs (this service runs none: always empty)",
    group: "Transactions",
    methods: ["POST", "GET"],
    path: "/v1/jobs/list",
    body: { kind: "json", schema: z.object({}) },
    response: z.object({ jobs: z.array(z.object({})) }),
  }),
  DescribeTransaction: defineOperation({
    operationId: "DescribeTransaction",
    summary: "What became of a write applied once per request id, by the transaction_id its answer gave: Running, Succeeded or Failed",
    group: "Transactions",
    methods: ["POST"],
    path: "/v1/transaction/{id}/describe",
    query: z.object(delimiterQuery),
    body: { kind: "json", schema: z.object(requestBase) },
    response: z.object({ status, properties: z.record(z.string(), z.string()).optional(), context }),
  }),
  AlterTransaction: defineOperation({
    operationId: "AlterTransaction",
    summary: "Alter a transaction: refused (406), as a transaction of this service is one write, done or being done",
    group: "Transactions",
    methods: ["POST"],
    path: "/v1/transaction/{id}/alter",
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
  }),
};
