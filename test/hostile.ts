/**
 * Tools for the hostile-input tests: a raw HTTP client that sends paths exactly as written, fingerprints of a
 * directory tree to prove a request changed nothing on disk, and a checker for the documented error shape.
 */
import { createHash } from "node:crypto";
import http from "node:http";
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import path from "node:path";
import { ErrorCode } from "@/lib/contract/errors";

export interface RawRequest {
  method: string;
  /** Sent byte for byte: fetch would resolve `..` segments and re-encode the path before it left the client. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Raw header lines as received, to see anything a parsed view would fold or hide. */
  rawHeaders: string[];
  text: string;
  bytes: Buffer;
}

export function send(base: string, req: RawRequest): Promise<RawReply> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const body = req.body === undefined ? undefined : typeof req.body === "string" ? Buffer.from(req.body) : Buffer.from(req.body);
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers: { ...(req.headers ?? {}), ...(body ? { "content-length": String(body.length) } : {}) },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const bytes = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, text: bytes.toString("utf8"), bytes });
        });
        res.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/**
 * Every entry under `root`: directories by name, files by a digest of their content, symbolic links by their
 * target (never followed). `skip` leaves out subtrees, given by path relative to the root.
 */
export function snapshot(root: string, skip: readonly string[] = []): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const relative = path.relative(root, full);
      if (skip.includes(relative)) continue;
      const stat = lstatSync(full);
      if (stat.isSymbolicLink()) out.set(relative, `link -> ${readlinkSync(full)}`);
      else if (stat.isDirectory()) {
        out.set(relative, "dir");
        walk(full);
      } else out.set(relative, `file ${createHash("sha256").update(readFileSync(full)).digest("hex")}`);
    }
  };
  walk(root);
  return out;
}

/** What differs between two snapshots, one line per path. */
export function changes(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [p, v] of after) {
    if (!before.has(p)) out.push(`created ${p}`);
    else if (before.get(p) !== v) out.push(`changed ${p}`);
  }
  for (const p of before.keys()) if (!after.has(p)) out.push(`removed ${p}`);
  return out;
}

/** Headers the server and Next.js set themselves; anything else in a response came from somewhere it should not. */
const OWN_HEADERS = new Set([
  "content-type",
  "x-request-id",
  "cache-control",
  "www-authenticate",
  "vary",
  "date",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "retry-after",
  "server-timing",
  // next.config.js sets these on every response.
  "x-content-type-options",
  "x-frame-options",
  "referrer-policy",
  "cross-origin-opener-policy",
  "permissions-policy",
  "content-security-policy",
]);
/** Next.js answers a path it normalizes (such as `//`) with a redirect before the API sees it. */
const REDIRECT_HEADERS = new Set(["location", "refresh"]);
/** Next.js names the path a proxy rewrote (proxy.ts rewrites API paths it cannot decode). */
const REWRITE_HEADER = "x-middleware-rewrite";

const CODES = new Set<number>(Object.values(ErrorCode));

/**
 * Why a reply breaks the contract for hostile input, or null when it keeps it. A path whose `..` segments lead out
 * of /v1 is a console page, which owes the API's error shape nothing: it must only not fail.
 */
export function contractProblem(req: RawRequest, reply: RawReply): string | null {
  if (reply.status >= 500) return `status ${reply.status}: ${reply.text.slice(0, 300)}`;
  if (!/^\/v1(\/|$)/.test(new URL(req.path, "http://x").pathname)) return null;
  for (const name of Object.keys(reply.headers)) {
    const redirect = reply.status >= 300 && reply.status < 400 && REDIRECT_HEADERS.has(name);
    if (!OWN_HEADERS.has(name) && !redirect && name !== REWRITE_HEADER) return `unexpected response header '${name}'`;
  }
  if (reply.status < 400) return null;
  if (!String(reply.headers["content-type"]).startsWith("application/json"))
    return `error with content type ${reply.headers["content-type"]}: ${reply.text.slice(0, 200)}`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(reply.text);
  } catch {
    return `error body is not JSON: ${reply.text.slice(0, 200)}`;
  }
  const strings = ["type", "title", "detail", "instance", "error"].filter((k) => typeof body[k] !== "string");
  if (strings.length) return `error body lacks string field(s) ${strings.join(", ")}: ${reply.text.slice(0, 300)}`;
  if (body.status !== reply.status) return `error body status ${body.status} differs from HTTP status ${reply.status}`;
  if (typeof body.code !== "number" || !CODES.has(body.code)) return `error body code ${body.code} is not a Lance error code`;
  if (!(body.type as string).startsWith("/errors/")) return `error type '${body.type}' is not an /errors/ path`;
  return null;
}
