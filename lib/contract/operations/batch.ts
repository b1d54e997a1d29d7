/** Changes to several tables applied together, all or nothing. */
import { z } from "zod";
import { delimiterQuery, requestBase, transactionIdField } from "../common";
import { batchCommitResults, batchCreatedVersions, declareFields, tableVersionFields, versionRangesFields } from "../table-changes";
import { defineOperation } from "../operation";

/** A part of a batch names its table; who is calling is said once, for the whole batch. */
const ALL_OR_NOTHING =
  "all or nothing: every part is checked before any is applied, and when one fails those applied before it are undone; readers asking this service for versions see the new versions all at once, readers listing the store itself may see some tables changed before the others";

const part = {
  id: z.array(z.string()).min(1).describe("The table"),
  context: requestBase.context,
  identity: z
    .unknown()
    .refine((v) => v === undefined || v === null, "the caller's identity is given once, for the whole batch, at its top level")
    .optional(),
};

export const operation = z
  .object({
    declare_table: z.object({ ...part, ...declareFields }).nullish(),
    create_table_version: z.object({ ...part, ...tableVersionFields }).nullish(),
    delete_table_versions: z.object({ ...part, ...versionRangesFields }).nullish(),
    deregister_table: z.object(part).nullish(),
  })
  .refine(
    (op) => Object.values(op).filter((v) => v != null).length === 1,
    "give exactly one of declare_table, create_table_version, delete_table_versions and deregister_table",
  );

export const batchOperations = {
  BatchCreateTableVersions: defineOperation({
    operationId: "BatchCreateTableVersions",
    summary: `Commit staged manifests as versions of several tables, ${ALL_OR_NOTHING}`,
    group: "Batches",
    methods: ["POST"],
    path: "/v1/table/version/batch-create",
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({
        identity: requestBase.identity,
        context: requestBase.context,
        entries: z.array(z.object({ id: part.id, ...tableVersionFields })),
      }),
    },
    response: batchCreatedVersions.extend(transactionIdField),
  }),
  BatchCommitTables: defineOperation({
    operationId: "BatchCommitTables",
    summary: `Commit declares, versions, version deletions and deregisters of several tables, ${ALL_OR_NOTHING}`,
    group: "Batches",
    methods: ["POST"],
    path: "/v1/table/batch-commit",
    query: z.object(delimiterQuery),
    body: {
      kind: "json",
      schema: z.object({ identity: requestBase.identity, context: requestBase.context, operations: z.array(operation) }),
    },
    response: batchCommitResults.extend(transactionIdField),
  }),
};
