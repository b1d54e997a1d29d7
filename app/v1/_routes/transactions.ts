import { z } from "zod";
import { QuiverError } from "@/server/errors";
import { route } from "@/server/http/api";
import { context, delimiterQuery, requestBase } from "./common";

/**
 * Every operation of this service finishes before it answers, so none hands out a transaction id to follow up:
 * whatever id a client asks about, no such transaction exists.
 */
const noSuchTransaction = (id: string[]) =>
  new QuiverError("TransactionNotFound", `transaction '${id.join("$")}' does not exist: this service completes every operation before answering and issues no transaction ids`);

const status = z.enum(["Queued", "Running", "Succeeded", "Failed", "Canceled"]);
const mode = z.enum(["Overwrite", "Fail", "Skip"]);

export const transactionRoutes = [
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
