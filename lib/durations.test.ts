import { expect, it } from "vitest";
import { parseDuration } from "./durations";

it("parses durations", () => {
  expect(parseDuration("500ms")).toBe(500);
  expect(parseDuration("30s")).toBe(30_000);
  expect(parseDuration("5m")).toBe(300_000);
  expect(parseDuration("1h")).toBe(3_600_000);
  expect(parseDuration("30d")).toBe(30 * 86_400_000);
  expect(parseDuration("2")).toBe(2000);
  expect(parseDuration("soon")).toBeNull();
  expect(parseDuration("-1s")).toBeNull();
  expect(parseDuration("0s")).toBeNull();
});
