import { describe, expect, it } from "vitest";
import { z } from "zod";
import { unknownFields } from "./unknown-fields";

const schema = z.object({
  filter: z.string().nullish(),
  columns: z
    .union([z.array(z.string()), z.object({ column_names: z.array(z.string()).nullish(), column_aliases: z.record(z.string(), z.string()).nullish() })])
    .nullish(),
  alterations: z.array(z.object({ path: z.string(), rename: z.string().optional() })).optional(),
  order: z.object({ by: z.string() }).default({ by: "id" }),
  context: z.record(z.string(), z.unknown()).nullish(),
  count: z.string().pipe(z.coerce.number()).optional(),
});

describe("unknownFields", () => {
  it("names nothing when every key has a place, however deep", () => {
    expect(
      unknownFields(
        schema,
        { filter: "x", columns: { column_names: ["a"] }, alterations: [{ path: "a", rename: "b" }], context: { any: { thing: 1 } } },
        "body",
      ),
    ).toEqual([]);
    expect(unknownFields(schema, { columns: ["a"], order: null, count: "3" }, "body")).toEqual([]);
  });

  it("names each key the schema has no place for, with its path", () => {
    expect(
      unknownFields(
        schema,
        {
          full_text_query: { q: 1 },
          columns: { column_names: ["a"], double_x: "x * 2" },
          alterations: [{ path: "a" }, { path: "b", data_typ: {} }],
          order: { by: "x", asc: true },
        },
        "body",
      ),
    ).toEqual(["body.full_text_query", "body.columns.double_x", "body.alterations[1].data_typ", "body.order.asc"]);
  });

  it("leaves values that fit no branch, or are not objects, to the parser", () => {
    expect(unknownFields(schema, { columns: 5, alterations: "x", filter: { a: 1 } }, "body")).toEqual([]);
  });
});
