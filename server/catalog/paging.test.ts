import { describe, expect, it } from "vitest";
import { decodePageToken, pageOf } from "./paging";

const keys = Array.from({ length: 100 }, (_, i) => `k${String(i).padStart(3, "0")}`);

describe("pageOf", () => {
  it("walks the keys after the token, keeping what accept admits, with a token only while keys remain", async () => {
    const even = (key: string) => Number(key.slice(1)) % 2 === 0;
    const first = await pageOf(keys, undefined, 10, even);
    expect(first.items).toEqual(["k000", "k002", "k004", "k006", "k008", "k010", "k012", "k014", "k016", "k018"]);
    const second = await pageOf(keys, first.pageToken, 10, even);
    expect(second.items[0]).toBe("k020");
    const last = await pageOf(keys, "k089", 10, even);
    expect(last.items).toEqual(["k090", "k092", "k094", "k096", "k098"]);
    expect(last.pageToken).toBeUndefined();
  });

  it("checks several keys at once, and none past what the page needs", async () => {
    const asked: string[] = [];
    let inFlight = 0;
    let most = 0;
    const slowAccept = async (key: string) => {
      asked.push(key);
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight--;
      return key !== "k003";
    };
    const page = await pageOf(keys, undefined, 10, slowAccept);
    expect(page.items).toEqual(["k000", "k001", "k002", "k004", "k005", "k006", "k007", "k008", "k009", "k010"]);
    expect(asked.sort()).toEqual(keys.slice(0, 11));
    expect(most).toBe(10);
    expect(decodePageToken(page.pageToken)).toBe("k010");
  });
});
