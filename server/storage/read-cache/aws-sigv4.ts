/**
 * AWS Signature Version 4 for S3, by AWS's own signer (`@smithy/signature-v4`, what the AWS SDK signs with). The engine
 * signs its requests for the read cache's loopback endpoint; the cache checks that signature with the root's own key
 * (cached bytes go only to a request the store would take) and signs the request again for the store's host.
 * Erasable TypeScript (see disk-cache.ts).
 */
import { createHash, createHmac, timingSafeEqual, type Hash, type Hmac } from "node:crypto";
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { SignatureV4 } from "@smithy/signature-v4";

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
}

/** S3 rejects a request dated further than this from its own clock. */
const CLOCK_SKEW_MS = 15 * 60_000;

/** SHA-256 (and, given a key, HMAC-SHA256) from Node's crypto, in the form the signer takes. */
class NodeSha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash("sha256") : createHmac("sha256", toBytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(toBytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    throw new Error("a digest is made once");
  }
}

function toBytes(data: string | ArrayBuffer | ArrayBufferView): string | Buffer {
  if (typeof data === "string") return data;
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

function header(headers: IncomingHttpHeaders | OutgoingHttpHeaders, name: string): string {
  const value = headers[name];
  return (Array.isArray(value) ? value.join(",") : String(value ?? "")).trim();
}

/** The query as the signer takes it: each name and value decoded once, a name given twice with each of its values. */
function queryOf(rawQuery: string): Record<string, string | string[]> {
  const decode = (text: string) => decodeURIComponent(text.replace(/\+/g, "%20"));
  const query: Record<string, string | string[]> = {};
  for (const pair of rawQuery.split("&").filter(Boolean)) {
    const at = pair.indexOf("=");
    const [name, value] = at < 0 ? [decode(pair), ""] : [decode(pair.slice(0, at)), decode(pair.slice(at + 1))];
    const before = query[name];
    query[name] = before === undefined ? value : [...(Array.isArray(before) ? before : [before]), value];
  }
  return query;
}

/** `20130524T000000Z` as a date. */
function parseAmzDate(text: string): Date | undefined {
  const dated = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  return dated ? new Date(Date.UTC(+dated[1], +dated[2] - 1, +dated[3], +dated[4], +dated[5], +dated[6])) : undefined;
}

/** The request signed with `credentials`: `path` as sent (S3 encodes it once), only the headers in `signed` signed. */
async function sign(
  method: string,
  path: string,
  rawQuery: string,
  headers: Record<string, string>,
  signed: Set<string>,
  credentials: AwsCredentials,
  scope: { date: Date; region: string; service: string },
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: scope.service,
    region: scope.region,
    credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey, sessionToken: credentials.sessionToken },
    sha256: NodeSha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
  const request = { method, protocol: "https:", hostname: headers.host ?? "", path: path || "/", query: queryOf(rawQuery), headers };
  const unsigned = new Set(Object.keys(headers).filter((name) => !signed.has(name)));
  const done = await signer.sign(request, { signingDate: scope.date, signableHeaders: signed, unsignableHeaders: unsigned });
  return done.headers;
}

/** Whether the request carries a SigV4 signature made with `credentials`' key, dated within S3's allowed skew. */
export async function signedWithAwsKey(
  method: string,
  path: string,
  rawQuery: string,
  headers: IncomingHttpHeaders,
  credentials: AwsCredentials,
  now = Date.now(),
): Promise<boolean> {
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)$/.exec(
      header(headers, "authorization"),
    );
  if (!match || match[1] !== credentials.accessKeyId) return false;
  const [, , day, region, service, signedHeaders, presented] = match;
  const date = parseAmzDate(header(headers, "x-amz-date"));
  if (!date || !(Math.abs(now - date.getTime()) <= CLOCK_SKEW_MS) || !header(headers, "x-amz-date").startsWith(day)) return false;
  const names = signedHeaders.split(";");
  // The signer sets the date (and the root's session token) itself, from what it is given.
  const given = Object.fromEntries(names.filter((name) => name !== "x-amz-date").map((name) => [name, header(headers, name)]));
  const remade = await sign(
    method,
    path,
    rawQuery,
    given,
    new Set(names),
    { ...credentials, sessionToken: given["x-amz-security-token"] },
    { date, region, service },
  );
  const expected = /Signature=([0-9a-f]+)$/.exec(remade.authorization ?? "")?.[1] ?? "";
  const a = Buffer.from(presented, "hex");
  const b = Buffer.from(expected, "hex");
  return a.length === b.length && /SignedHeaders=([^,\s]+)/.exec(remade.authorization)?.[1] === signedHeaders && timingSafeEqual(a, b);
}

/**
 * The headers to send a request to `host` with, signed with `credentials`: the request's own, less its signature and
 * host, with the store's host, a new date and every `x-amz-` header signed (S3 refuses one left unsigned).
 */
export async function signForStore(
  method: string,
  host: string,
  path: string,
  rawQuery: string,
  headers: IncomingHttpHeaders,
  credentials: AwsCredentials,
  now = new Date(),
): Promise<OutgoingHttpHeaders> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (!["authorization", "host", "x-amz-date", "x-amz-security-token"].includes(name) && value !== undefined) out[name] = header(headers, name);
  out.host = host;
  out["x-amz-content-sha256"] ||= "UNSIGNED-PAYLOAD";
  const signed = new Set([
    "host",
    "x-amz-date",
    ...Object.keys(out).filter((name) => name.startsWith("x-amz-")),
    ...(credentials.sessionToken ? ["x-amz-security-token"] : []),
  ]);
  return sign(method, path, rawQuery, out, signed, credentials, { date: now, region: credentials.region, service: "s3" });
}
