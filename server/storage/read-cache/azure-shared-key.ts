/**
 * Azure Blob Storage's Shared Key signature of a request (learn.microsoft.com, "Authorize with Shared Key"): the read
 * cache answers a range from disk only to a request signed with the root's own key, as the store would.
 * Erasable TypeScript (see disk-cache.ts).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

const SIGNED_STANDARD_HEADERS = [
  "content-encoding",
  "content-language",
  "content-length",
  "content-md5",
  "content-type",
  "date",
  "if-modified-since",
  "if-match",
  "if-none-match",
  "if-unmodified-since",
  "range",
];

/** Azure rejects a request dated further than this from its own clock. */
const CLOCK_SKEW_MS = 15 * 60_000;

function header(headers: IncomingHttpHeaders, name: string): string {
  const value = headers[name];
  return (Array.isArray(value) ? value.join(",") : (value ?? "")).trim();
}

function stringToSign(method: string, url: URL, headers: IncomingHttpHeaders, account: string): string {
  const standard = SIGNED_STANDARD_HEADERS.map((name) => {
    const value = header(headers, name);
    return name === "content-length" && value === "0" ? "" : value;
  });
  const canonicalHeaders = Object.keys(headers)
    .map((name) => name.toLowerCase())
    .filter((name) => name.startsWith("x-ms-"))
    .sort()
    .map((name) => `${name}:${header(headers, name).replace(/\s+/g, " ")}\n`)
    .join("");
  const params = new Map<string, string[]>();
  for (const [name, value] of url.searchParams) {
    const key = name.toLowerCase();
    params.set(key, [...(params.get(key) ?? []), value]);
  }
  const canonicalQuery = [...params.keys()]
    .sort()
    .map((name) => `\n${name}:${params.get(name)!.sort().join(",")}`)
    .join("");
  return [method, ...standard, `${canonicalHeaders}/${account}${url.pathname}${canonicalQuery}`].join("\n");
}

/** The Shared Key signature of a request, as its Authorization header carries it after `SharedKey <account>:`. */
export function sharedKeySignature(method: string, url: URL, headers: IncomingHttpHeaders, account: string, key: Buffer): Buffer {
  return createHmac("sha256", key)
    .update(stringToSign(method, url, headers, account), "utf8")
    .digest();
}

/** Whether the request carries the root's Shared Key signature, dated within Azure's allowed skew. */
export function signedWithKey(method: string, url: URL, headers: IncomingHttpHeaders, account: string, key: Buffer): boolean {
  const presented = new RegExp(`^SharedKey ${account}:(\\S+)$`).exec(header(headers, "authorization"))?.[1];
  if (!presented) return false;
  const dated = Date.parse(header(headers, "x-ms-date") || header(headers, "date"));
  if (!(Math.abs(Date.now() - dated) <= CLOCK_SKEW_MS)) return false;
  const expected = sharedKeySignature(method, url, headers, account, key);
  const given = Buffer.from(presented, "base64");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Whether the request carries the root's SAS token's signature. */
export function signedWithSas(url: URL, sasToken: string): boolean {
  const expected = new URLSearchParams(sasToken.replace(/^\?/, "")).get("sig");
  const given = url.searchParams.get("sig");
  if (!expected || !given) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
