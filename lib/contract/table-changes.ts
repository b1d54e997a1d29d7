/**
 * The requests of the table changes a batch commit can hold (DeclareTable, CreateTableVersion,
 * BatchDeleteTableVersions, DeregisterTable), taken alone by their own routes or as parts of BatchCommitTables and
 * BatchCreateTableVersions, and the batches' answers.
 */
import { z } from "zod";
import { declaredTable, tableVersion } from "./catalog";
import { branchField, context, properties } from "./common";

export const declareFields = {
  location: z.string().nullish(),
  vend_credentials: z.boolean().nullish(),
  properties: properties.nullish(),
};

export const tableVersionFields = {
  ...branchField,
  version: z.number().int().min(1),
  manifest_path: z.string().min(1).describe("The staged manifest, inside the table's directory"),
  manifest_size: z.number().int().min(0).nullish(),
  e_tag: z.string().nullish(),
  metadata: z.record(z.string(), z.string()).nullish().describe("Refused when not empty: a version's metadata is written in its manifest"),
  naming_scheme: z.enum(["V1", "V2"]).nullish(),
};

export const versionRangesFields = {
  ...branchField,
  ranges: z.array(
    z.object({
      start_version: z.number().int().min(0),
      end_version: z.number().int().min(-1).describe("Exclusive; -1 runs through the latest version"),
    }),
  ),
};

export const createdVersion = z.object({ version: tableVersion, context });
export const deletedVersions = z.object({ deleted_count: z.number().int(), context });
/** UpdateTableProperties: the table's properties after the change, and whether the catalog now manages its versions. */
export const updatedTableProperties = z.object({ properties, managed_versioning: z.boolean(), context });
export const deregisteredTable = z.object({ id: z.array(z.string()), location: z.string(), properties, context });

export const batchCreatedVersions = z.object({ versions: z.array(tableVersion), context });
/** Each part's answer, in the order of the request, under the name of its kind. */
export const batchCommitResults = z.object({
  results: z.array(
    z.object({
      declare_table: declaredTable.omit({ context: true }).optional(),
      create_table_version: createdVersion.omit({ context: true }).optional(),
      delete_table_versions: deletedVersions.omit({ context: true }).optional(),
      deregister_table: deregisteredTable.omit({ context: true }).optional(),
    }),
  ),
  context,
});
