/**
 * Every operation of the API by its id: the table app/v1/_routes serves (one route per operation, checked by
 * test/api-operations.test.ts) and the console's typed client calls.
 */
import { adminOperations } from "./admin";
import { batchOperations } from "./batch";
import { columnOperations } from "./columns";
import { dataOperations } from "./data";
import { indexOperations } from "./indexes";
import { maintenanceOperations } from "./maintenance";
import { mapOperations } from "./maps";
import { namespaceOperations } from "./namespaces";
import { serviceOperations } from "./service";
import { sqlOperations } from "./sql";
import { tableOperations } from "./tables";
import { transactionOperations } from "./transactions";
import { versionOperations } from "./versions";

export const operations = {
  ...serviceOperations,
  ...namespaceOperations,
  ...tableOperations,
  ...dataOperations,
  ...columnOperations,
  ...versionOperations,
  ...indexOperations,
  ...batchOperations,
  ...maintenanceOperations,
  ...transactionOperations,
  ...adminOperations,
  ...sqlOperations,
  ...mapOperations,
};

export type Operations = typeof operations;
export type OperationId = keyof Operations;
