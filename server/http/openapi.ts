/**
 * The OpenAPI 3.1 document, generated from the route table and the same zod schemas that validate requests,
 * so the description cannot drift from what the service accepts.
 */
import "server-only";
import { z } from "zod";
import { sqlJsonAnswer } from "@/lib/contract/operations/sql";
import type { RouteDef } from "./route";

const errorSchema = {
  type: "object",
  required: ["type", "title", "status", "detail", "instance", "code", "error"],
  properties: {
    type: { type: "string", description: "Error type path, e.g. /errors/not-found-error" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    instance: { type: "string", description: "Path of the request" },
    code: { type: "integer", description: "Lance Namespace error code (0-23)" },
    error: { type: "string", description: "Human-readable message" },
    context: { type: "object", additionalProperties: { type: "string" } },
  },
};

function schemaOf(schema: z.ZodType, io: "input" | "output") {
  const out = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

function queryParameters(schema: z.ZodType | undefined) {
  if (!schema) return [];
  const json = schemaOf(schema, "input") as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({
    name,
    in: "query",
    required: json.required?.includes(name) ?? false,
    description: s.description,
    schema: { ...s, description: undefined },
  }));
}

/** The headers that name a write request, which is applied once per name (docs/api.md, "Retries and request ids"). */
const requestNames = [
  {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description: "Names the request: a repeat within the idempotency window answers the first's answer and writes nothing",
    schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
  },
  {
    name: "x-request-id",
    in: "header",
    required: false,
    description: "Names the request when no Idempotency-Key does (LanceDB's clients send one on every call)",
    schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
  },
];

export function openApiDocument(routes: RouteDef[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      description: m[1] === "id" ? "Identifier parts joined by the delimiter; the delimiter alone is the root namespace" : undefined,
      schema: { type: "string" },
    }));
    const responses: Record<string, unknown> = {
      default: { description: "Error", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
    };
    if (route.response === "arrow-file") {
      responses["200"] = { description: "Arrow IPC file", content: { "application/vnd.apache.arrow.file": { schema: { type: "string", format: "binary" } } } };
    } else if (route.response === "arrow-stream") {
      responses["200"] = {
        description: "Arrow IPC stream; JSON when the request asks for it",
        content: {
          "application/vnd.apache.arrow.stream": { schema: { type: "string", format: "binary" } },
          "application/json": { schema: schemaOf(sqlJsonAnswer, "output") },
        },
      };
    } else if (route.response === "media") {
      responses["200"] = {
        description: "The stored value, with the content type its leading bytes say",
        content: { "*/*": { schema: { type: "string", format: "binary" } } },
      };
      responses["206"] = { description: "The byte range the Range header asked for", content: { "*/*": { schema: { type: "string", format: "binary" } } } };
    } else if (route.response === "integer") {
      responses["200"] = { description: "A bare integer", content: { "application/json": { schema: { type: "integer" } } } };
    } else if (route.response === "empty") {
      responses["200"] = { description: "Success" };
    } else {
      responses["200"] = { description: "Success", content: { "application/json": { schema: schemaOf(route.response, "output") } } };
    }
    if (route.once) {
      (responses["200"] as Record<string, unknown>).headers = {
        "idempotent-replayed": { description: "`true` when this is the answer of an earlier attempt of the request", schema: { type: "string" } },
      };
    }
    let requestBody: unknown;
    if (route.body?.kind === "json") {
      requestBody = { required: false, content: { "application/json": { schema: schemaOf(route.body.schema, "input") } } };
    } else if (route.body?.kind === "arrow") {
      requestBody = {
        required: true,
        description: "Arrow IPC stream; buffers may be LZ4_FRAME or ZSTD compressed",
        content: { "application/vnd.apache.arrow.stream": { schema: { type: "string", format: "binary" } } },
      };
    }
    const item = (paths[route.path] ??= {});
    route.methods.forEach((method, i) => {
      item[method.toLowerCase()] = {
        operationId: i === 0 ? route.operationId : `${route.operationId}${method[0]}${method.slice(1).toLowerCase()}`,
        summary: route.summary,
        tags: [route.group],
        parameters: [...pathParams, ...queryParameters(route.query), ...(route.once ? requestNames : [])],
        ...(requestBody ? { requestBody } : {}),
        responses,
      };
    });
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Quiver table catalog API",
      version,
      description: "The Lance Namespace REST interface over Lance datasets. Errors carry the seed's type/title/status/detail/instance and Lance's code/error.",
    },
    servers: [{ url: "/" }],
    paths,
    components: {
      schemas: { Error: errorSchema },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
      },
    },
  };
}
