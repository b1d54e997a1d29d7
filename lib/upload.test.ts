import { describe, expect, it } from "vitest";
import { uploadKey } from "./upload";

describe("uploadKey", () => {
  it("names one file's write to one URL the same each time it is sent, and any other write otherwise", () => {
    const key = uploadKey("items.csv-120-1700000000000-0.25", "/v1/table/shop$items/insert?mode=append");
    expect(key).toMatch(/^upload-[0-9a-f]{16}$/);
    expect(uploadKey("items.csv-120-1700000000000-0.25", "/v1/table/shop$items/insert?mode=append")).toBe(key);
    expect(uploadKey("items.csv-120-1700000000000-0.25", "/v1/table/shop$items/insert?mode=overwrite")).not.toBe(key);
    expect(uploadKey("items.csv-120-1700000000000-0.26", "/v1/table/shop$items/insert?mode=append")).not.toBe(key);
  });
});
