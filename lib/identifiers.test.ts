import { describe, expect, it } from "vitest";
import { encodeIdentifier, formatIdentifier, parseIdentifier } from "./identifiers";

describe("identifiers", () => {
  it("splits on the delimiter and treats the delimiter alone as the root", () => {
    expect(parseIdentifier("a$b$t")).toEqual(["a", "b", "t"]);
    expect(parseIdentifier("$")).toEqual([]);
    expect(parseIdentifier("a::t", "::")).toEqual(["a", "t"]);
    expect(parseIdentifier(".", ".")).toEqual([]);
  });

  it.each(["a$$t", "$t", "t$", "..", "a$..$t", "a/b", "a\u0000b", "a b", "é", "x".repeat(129)])("rejects %j", (raw) => {
    expect(() => parseIdentifier(raw)).toThrow(/invalid identifier/);
  });

  it("rejects a bad delimiter", () => {
    expect(() => parseIdentifier("a", "")).toThrow(/delimiter/);
    expect(() => parseIdentifier("a", "\n")).toThrow(/delimiter/);
  });

  it("formats and encodes for URLs", () => {
    expect(formatIdentifier([])).toBe("$");
    expect(formatIdentifier(["a", "t"], ".")).toBe("a.t");
    expect(encodeIdentifier(["a", "t"])).toBe("a%24t");
  });
});
