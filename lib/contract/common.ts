/**
 * Schemas every operation of the API shares: the fields any JSON request may carry, the `context` every JSON
 * object answer carries, paging and branch fields.
 */
import { z } from "zod";

/** What a client reads from an answer that its schema describes. */
export type Answer<S extends z.ZodType> = z.output<S>;

export const properties = z.record(z.string(), z.string()).describe("Business properties kept by the catalog");

/** Fields every JSON request may carry. */
export const requestBase = {
  identity: z.object({ api_key: z.string().optional(), auth_token: z.string().optional() }).partial().nullish().describe("Caller identity"),
  context: z.record(z.string(), z.unknown()).nullish().describe("Caller-provided context"),
  id: z.array(z.string()).nullish().describe("Identifier; must agree with the path when given"),
};

export const context = z.record(z.string(), z.string()).describe("Response headers, as header.<name> entries");

/** The answer of a call whose result is a table version: the commit it made, or the version a tag names. */
export const versionResponse = { version: z.number().int(), context };
export const versionAnswer = z.object(versionResponse);

/**
 * A write applied once per request id answers its id in the write ledger, which DescribeTransaction takes to tell
 * what became of it (given when the write committed).
 */
export const transactionIdField = {
  transaction_id: z.string().optional().describe("The write's id in the write ledger, for DescribeTransaction; given when it committed"),
};
export const writeAnswer = z.object({ ...versionResponse, ...transactionIdField });

/** The answers of the two Arrow writes the console sends, insert and merge-insert. */
export const insertAnswer = z.object({ ...versionResponse, ...transactionIdField, num_inserted_rows: z.number().int() });
export const mergeInsertAnswer = z.object({
  ...versionResponse,
  ...transactionIdField,
  num_updated_rows: z.number().int(),
  num_inserted_rows: z.number().int(),
  num_deleted_rows: z.number().int(),
  num_attempts: z.number().int().optional().describe("commits the merge took (0: the source could change nothing, so nothing was committed)"),
});

export const pageToken = z.string().optional().describe("Token for the next page; absent at the end of the listing");

export const delimiterQuery = {
  delimiter: z.string().optional().describe("Delimiter of the identifier parts in {id} (default $)"),
};

export const branchQuery = {
  branch: z.string().optional().describe("Branch to target; main when absent"),
};

export const branchField = {
  branch: z.string().nullish().describe("Branch to target; main when absent"),
};

/** Query parameters arrive as strings: booleans, integers and optional strings as the API takes them. */

const truthy = new Set(["true", "1", "yes", "on", ""]);
const falsy = new Set(["false", "0", "no", "off"]);

export const qBool = (description: string) =>
  z
    .string()
    .optional()
    .describe(description)
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      const lower = v.toLowerCase();
      if (truthy.has(lower)) return true;
      if (falsy.has(lower)) return false;
      ctx.addIssue({ code: "custom", message: `'${v}' is not a boolean (use true or false)` });
      return z.NEVER;
    });

export const qInt = (description: string, min = 0) =>
  z
    .string()
    .optional()
    .describe(description)
    .transform((v, ctx) => {
      if (v === undefined || v === "") return undefined;
      if (!/^-?\d+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) < min) {
        ctx.addIssue({ code: "custom", message: `'${v}' is not an integer of at least ${min}` });
        return z.NEVER;
      }
      return Number(v);
    });

export const qString = (description: string) => z.string().optional().describe(description);

export const pageQuery = {
  page_token: qString("Token from the previous response's page_token"),
  limit: qInt("Inclusive upper bound on the number of items returned", 1),
};

/**
 * One of `values` (snake_case), described in OpenAPI as an enum of their PascalCase forms. Taken case-insensitively,
 * in PascalCase or snake_case (as the seed says of `mode`), and handed to the handler as the snake_case value;
 * absent or null is undefined, anything else is refused naming what is allowed.
 */
export function choice<const T extends string>(values: readonly T[], description: string, { nullable = false } = {}) {
  const pascal = values.map((v) =>
    v
      .split("_")
      .map((word) => word[0].toUpperCase() + word.slice(1))
      .join(""),
  );
  return z
    .string()
    .nullish()
    .meta({ enum: nullable ? [...pascal, null] : pascal, description: `${description} (case-insensitive; PascalCase or snake_case)` })
    .transform((value, ctx): T | undefined => {
      if (value === undefined || value === null || value === "") return undefined;
      const found = values.find((v) => v === value.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase());
      if (found !== undefined) return found;
      ctx.addIssue({ code: "custom", message: `'${value}' is not one of ${pascal.join(", ")}` });
      return z.NEVER;
    });
}

/** The distance metrics of vector search and vector indexes. */
export const DISTANCE_TYPES = ["l2", "cosine", "dot", "hamming"] as const;
export const distanceType = (description: string) =>
  z
    .string()
    .nullish()
    .meta({ enum: [...DISTANCE_TYPES, null], description: `${description} (case-insensitive)` });

/**
 * A field the spec defines for something Quiver does not do (a computed column, a virtual one): taken by the schema so
 * that it is never refused as unknown, and refused with 406 (Unsupported) and this reason when a request sets it.
 */
const unsupportedFields = z.registry<{ unsupported: string }>();
export const unsupported = (reason: string) => {
  const field = z.unknown().optional().describe(`Not supported (406 when set): ${reason}`);
  unsupportedFields.add(field, { unsupported: reason });
  return field;
};
export const unsupportedReason = (schema: z.ZodType) => unsupportedFields.get(schema)?.unsupported;
