/** This process, as the records it leaves in the store name it: a claim in the write ledger, a note of tables it wrote, the maintainer's lease. */
import "server-only";
import { randomUUID } from "node:crypto";

export const INSTANCE = randomUUID();
