/** The service itself: its own description. */
import { z } from "zod";
import { defineOperation } from "../operation";

export const serviceOperations = {
  GetOpenApi: defineOperation({
    operationId: "GetOpenApi",
    summary: "This API's OpenAPI 3.1 description",
    group: "Service",
    methods: ["GET"],
    path: "/v1/openapi.json",
    response: z.object({ openapi: z.string() }).passthrough(),
  }),
};
