import { describe, expect, it } from "vitest";
import { formatFieldPath, parseFieldPath } from "./field-path";

describe("field paths", () => {
  it.each([
    ["id", ["id"]],
    ["a.b.c", ["a", "b", "c"]],
    ["`a.b`", ["a.b"]],
    ["`a.b`.c", ["a.b", "c"]],
    ["`we``ird`", ["we`ird"]],
  ])("parses %s", (path, expected) => {
    expect(parseFieldPath(path)).toEqual(expected);
    expect(parseFieldPath(formatFieldPath(expected))).toEqual(expected);
  });

  it.each(["", "a.", ".a", "a..b", "`a", "`a`b", "a`b`"])("rejects %j", (path) => {
    expect(() => parseFieldPath(path)).toThrow();
  });
});
