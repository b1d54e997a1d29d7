/**
 * What an operation of the API is, as both sides know it: its id, path and methods, the query and body it takes
 * and the answer it gives. The server serves each one (app/v1/_routes adds who may call and the handler), the
 * OpenAPI document describes it, and the console calls it through the typed client (lib/api-client.ts), so a
 * request or answer field renamed here fails the type check wherever it is used.
 */
import type { z } from "zod";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export type JsonBody = { kind: "json"; schema: z.ZodType };
export type ArrowBodySpec = { kind: "arrow" };

/** The special answers an operation can declare instead of a JSON schema. */
/** `arrow-stream`: an Arrow IPC stream, or JSON when the request asks for it (RunSql). */
export type ResponseForm = "arrow-file" | "arrow-stream" | "integer" | "empty" | "media";
export type ResponseSpec = z.ZodType | ResponseForm;

export interface OperationSpec<
  QS extends z.ZodType = z.ZodType,
  BS extends JsonBody | ArrowBodySpec | undefined = JsonBody | ArrowBodySpec | undefined,
  RS extends ResponseSpec = ResponseSpec,
> {
  operationId: string;
  summary: string;
  /** The OpenAPI group: the resource, as the operation's file in lib/contract/operations names it. */
  group: string;
  methods: Method[];
  path: string;
  query?: QS;
  body?: BS;
  /** JSON schema of a successful response, or the special forms. */
  response: RS;
}

/** Declares an operation, keeping the types of its schemas for the server's handlers and the console's calls. */
export function defineOperation<QS extends z.ZodType, BS extends JsonBody | ArrowBodySpec | undefined, RS extends ResponseSpec>(
  spec: OperationSpec<QS, BS, RS>,
): OperationSpec<QS, BS, RS> {
  return spec;
}
