/**
 * AWS Signature Version 4 for S3 (docs.aws.amazon.com, "Signature Version 4 signing process"). The engine signs its
 * requests for the read cache's loopback endpoint; the cache checks that signature with the root's own key (cached
 * bytes go only to a request the store would take) and signs the request again for the store's host.
 * Erasable TypeScript (see disk-cache.ts).
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
}

/** S3 rejects a request dated further than this from its own clock. */
const CLOCK_SKEW_MS = 15 * 60_000;

const ALGORITHM = "AWS4-HMAC-SHA256";

function header(headers: IncomingHttpHeaders | OutgoingHttpHeaders, name: string): string {
  const value = headers[name];
  return (Array.isArray(value) ? value.join(",") : String(value ?? "")).trim();
}

/** RFC 3986 encoding, as SigV4 wants it: everything but unreserved characters, hex in upper case. */
const encode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The query, each name and value encoded once, sorted by name and then value. */
function canonicalQuery(rawQuery: string): string {
  if (!rawQuery) return "";
  const decode = (text: string) => decodeURIComponent(text.replace(/\+/g, "%20"));
  return rawQuery
    .split("&")
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf("=");
      const [name, value] = at < 0 ? [pair, ""] : [pair.slice(0, at), pair.slice(at + 1)];
      return [encode(decode(name)), encode(decode(value))];
    })
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
}

const hmac = (key: Buffer | string, text: string) => createHmac("sha256", key).update(text, "utf8").digest();
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** The signature of a request: `path` as sent (S3 encodes it once), `signed` the lower-case header names, sorted. */
function signature(
  method: string,
  path: string,
  rawQuery: string,
  headers: IncomingHttpHeaders | OutgoingHttpHeaders,
  signed: string[],
  scope: string,
  secret: string,
) {
  const canonical = [
    method,
    path || "/",
    canonicalQuery(rawQuery),
    signed.map((name) => `${name}:${header(headers, name).replace(/\s+/g, " ")}\n`).join(""),
    signed.join(";"),
    header(headers, "x-amz-content-sha256") || "UNSIGNED-PAYLOAD",
  ].join("\n");
  const [date, region, service] = scope.split("/");
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), "aws4_request");
  return hmac(key, [ALGORITHM, header(headers, "x-amz-date"), scope, sha256(canonical)].join("\n"));
}

/** Whether the request carries a SigV4 signature made with `credentials`' key, dated within S3's allowed skew. */
export function signedWithAwsKey(
  method: string,
  path: string,
  rawQuery: string,
  headers: IncomingHttpHeaders,
  credentials: AwsCredentials,
  now = Date.now(),
): boolean {
  const match = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)$/.exec(
    header(headers, "authorization"),
  );
  if (!match || match[1] !== credentials.accessKeyId) return false;
  const [, , scope, signedHeaders, presented] = match;
  const dated = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(header(headers, "x-amz-date"));
  if (!dated) return false;
  const at = Date.UTC(+dated[1], +dated[2] - 1, +dated[3], +dated[4], +dated[5], +dated[6]);
  if (!(Math.abs(now - at) <= CLOCK_SKEW_MS)) return false;
  const expected = signature(method, path, rawQuery, headers, signedHeaders.split(";"), scope, credentials.secretAccessKey);
  const given = Buffer.from(presented, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The headers to send a request to `host` with, signed with `credentials`: the request's own, less its signature and
 * host, with the store's host, a new date and every `x-amz-` header signed (S3 refuses one left unsigned).
 */
export function signForStore(
  method: string,
  host: string,
  path: string,
  rawQuery: string,
  headers: IncomingHttpHeaders,
  credentials: AwsCredentials,
  now = new Date(),
): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (name !== "authorization" && name !== "host" && value !== undefined) out[name] = value;
  out.host = host;
  out["x-amz-date"] = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
  if (!out["x-amz-content-sha256"]) out["x-amz-content-sha256"] = "UNSIGNED-PAYLOAD";
  if (credentials.sessionToken) out["x-amz-security-token"] = credentials.sessionToken;
  const signed = Object.keys(out)
    .filter((name) => name === "host" || name.startsWith("x-amz-"))
    .sort();
  const scope = `${String(out["x-amz-date"]).slice(0, 8)}/${credentials.region}/s3/aws4_request`;
  const made = signature(method, path, rawQuery, out, signed, scope, credentials.secretAccessKey).toString("hex");
  out.authorization = `${ALGORITHM} Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signed.join(";")}, Signature=${made}`;
  return out;
}
