/**
 * The data root: a local directory or a prefix of an object store bucket, and the Lance storage options that reach
 * it. Parsed once from the environment; anything wrong is one line naming the setting, so that the server refuses
 * to start instead of failing on its first request.
 */
import "server-only";
import path from "node:path";
import { ConfigError } from "../config-error";

export type Cloud = "s3" | "gs" | "az";

export type DataRoot =
  | { kind: "local"; /** absolute path */ uri: string }
  | { kind: "object"; cloud: Cloud; bucket: string; /** without leading or trailing slash; "" for the bucket's top */ prefix: string; uri: string };
export type ObjectRoot = DataRoot & { kind: "object" };

const BUCKET_RULES: Record<Cloud, { pattern: RegExp; rule: string }> = {
  s3: { pattern: /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, rule: "3-63 lowercase letters, digits, '.' and '-'" },
  gs: { pattern: /^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/, rule: "3-63 lowercase letters, digits, '.', '_' and '-'" },
  az: { pattern: /^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/, rule: "3-63 lowercase letters, digits and single '-'" },
};
const PREFIX_SEGMENT = /^[A-Za-z0-9_.$=+-]+$/;

/** `./data`, `/srv/quiver`, `file:///srv/quiver`, `s3://bucket/prefix`, `gs://bucket/prefix`, `az://container/prefix`. */
export function parseRoot(raw: string, setting = "QUIVER_ROOT"): DataRoot {
  const value = raw.trim();
  if (value === "") throw new ConfigError(`${setting} is empty`);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(value)?.[1]?.toLowerCase();
  if (scheme === undefined) return { kind: "local", uri: path.resolve(/*turbopackIgnore: true*/ value) };
  if (scheme === "file") return { kind: "local", uri: path.resolve(decodeURIComponent(value.slice("file://".length))) };
  if (scheme !== "s3" && scheme !== "gs" && scheme !== "az") {
    throw new ConfigError(`${setting} '${value}': the scheme '${scheme}://' is not supported; use a local path, s3://, gs:// or az://`);
  }
  const rest = value.slice(scheme.length + 3);
  if (/[?#]/.test(rest)) throw new ConfigError(`${setting} '${value}': a root URI takes no query or fragment; give storage options in QUIVER_STORAGE_OPTIONS`);
  const [bucket, ...segments] = rest.replace(/\/+$/, "").split("/");
  const { pattern, rule } = BUCKET_RULES[scheme];
  if (!pattern.test(bucket ?? "")) {
    throw new ConfigError(`${setting} '${value}': '${bucket}' is not a valid ${scheme === "az" ? "container" : "bucket"} name (${rule})`);
  }
  for (const segment of segments) {
    if (segment === "" || segment === "." || segment === ".." || !PREFIX_SEGMENT.test(segment)) {
      throw new ConfigError(
        `${setting} '${value}': the prefix segment '${segment}' is not allowed (letters, digits and _ . $ = + - only, no empty, '.' or '..' segments)`,
      );
    }
  }
  const prefix = segments.join("/");
  return { kind: "object", cloud: scheme, bucket, prefix, uri: `${scheme}://${bucket}${prefix ? `/${prefix}` : ""}` };
}

/** `QUIVER_STORAGE_OPTIONS`: a JSON object of Lance storage options, string keys to string values. */
export function parseStorageOptions(raw: string | undefined, setting = "QUIVER_STORAGE_OPTIONS"): Record<string, string> {
  if (raw === undefined || raw.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new ConfigError(`${setting} is not valid JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ConfigError(`${setting} must be a JSON object of option names to string values`);
  }
  const options: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!/^[a-z][a-z0-9_]*$/.test(key))
      throw new ConfigError(`${setting}: '${key}' is not an option name (lowercase letters, digits and '_', as Lance names them)`);
    if (typeof value === "boolean" || typeof value === "number") options[key] = String(value);
    else if (typeof value === "string") options[key] = value;
    else throw new ConfigError(`${setting}: the value of '${key}' must be a string`);
  }
  return options;
}

/** The URI of a path below the root (`a/b` with `/` separators). */
export function childUri(root: DataRoot, relative: string): string {
  if (relative === "") return root.uri;
  return root.kind === "local" ? path.join(root.uri, ...relative.split("/")) : `${root.uri}/${relative}`;
}

/**
 * The URI of a path as Lance's object store names files (a staged manifest's `manifest_path`): without a scheme, a
 * local path without its leading `/`, an object store's key with its bucket or container left out.
 */
export function storePathUri(root: DataRoot, storePath: string): string {
  const path = storePath.replace(/^\/+/, "");
  return root.kind === "local" ? `/${path}` : `${bucketOf(root.uri)}${path}`;
}

/** The path Lance's object store names a URI of the root by: a local path as it is, a key without scheme and bucket. */
export function storePathOf(root: DataRoot, uri: string): string {
  return root.kind === "local" ? uri : uri.slice(bucketOf(uri).length);
}

/** An object store URI's scheme and bucket (or container), with the `/` after them: `az://container/`. */
function bucketOf(uri: string): string {
  const bucket = /^[a-z0-9]+:\/\/[^/]+/i.exec(uri)?.[0];
  return bucket === undefined ? "" : `${bucket}/`;
}

/**
 * The relative path below the root of a location a client sent: a path or URI inside the root, or a relative path.
 * Null when it is outside the root.
 */
export function relativeTo(root: DataRoot, location: string): string | null {
  if (root.kind === "local") {
    if (!path.isAbsolute(location)) return location;
    const relative = path.relative(root.uri, location);
    return relative.startsWith("..") || path.isAbsolute(relative) ? null : relative.split(path.sep).join("/");
  }
  if (!/^[a-z0-9]+:\/\//i.test(location)) return location;
  const base = `${root.uri}/`;
  return location.startsWith(base) ? location.slice(base.length).replace(/\/+$/, "") : null;
}
