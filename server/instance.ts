/** This process, as the records it leaves in the store name it: a claim in the write ledger, a note of tables it wrote, the maintainer's lease. */
import "server-only";
import { randomUUID } from "node:crypto";

// Next may load this module more than once in a process (one copy per bundle): the process has one id all the same.
const made = globalThis as typeof globalThis & { quiverInstance?: string };
export const INSTANCE = (made.quiverInstance ??= randomUUID());
