/** This process, as the records it leaves in the store name it: a claim in the write ledger, a note of tables it wrote, the maintainer's lease. */
import "server-only";
import { randomUUID } from "node:crypto";
import packageJson from "@/package.json";

export const INSTANCE = randomUUID();

/** The release this process runs, as package.json says it. */
export const VERSION: string = packageJson.version;
