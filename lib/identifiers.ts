/**
 * Namespace and table identifiers: a list of names, written in URLs as the names joined by a delimiter
 * (default `$`), where the delimiter alone is the root namespace. Shared by the API and the console.
 */

/**
 * The delimiter of identifiers: of `{id}` path segments unless a request names another, and of the catalog's object
 * ids, as Lance's directory namespace writes them.
 */
export const DELIMITER = "$";

/** The Lance name rule for local datasets, which Quiver applies to every namespace and table name. */
const NAME_PATTERN = /^[A-Za-z0-9_.-]+$/;
export const MAX_NAME_LENGTH = 128;
const MAX_DELIMITER_LENGTH = 16;

export type Identifier = string[];

export class IdentifierError extends Error {}

/** Returns why `name` cannot be a namespace or table name, or null when it can. */
export function nameProblem(name: string): string | null {
  if (name.length === 0) return "names cannot be empty";
  if (name === "." || name === "..") return `'${name}' is not a valid name`;
  if (name.length > MAX_NAME_LENGTH) return `names are at most ${MAX_NAME_LENGTH} characters`;
  if (!NAME_PATTERN.test(name)) {
    return `'${printable(name)}' may contain only letters, digits, '_', '-' and '.'`;
  }
  return null;
}

export function checkDelimiter(delimiter: string): string {
  if (delimiter.length === 0 || delimiter.length > MAX_DELIMITER_LENGTH) {
    throw new IdentifierError(`delimiter must be 1 to ${MAX_DELIMITER_LENGTH} characters`);
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(delimiter)) throw new IdentifierError("delimiter contains a control character");
  return delimiter;
}

/** Parses an already percent-decoded `{id}` path segment. */
export function parseIdentifier(raw: string, delimiter: string = DELIMITER): Identifier {
  checkDelimiter(delimiter);
  if (raw === delimiter) return [];
  const parts = raw.split(delimiter);
  for (const part of parts) {
    const problem = nameProblem(part);
    if (problem) throw new IdentifierError(`invalid identifier '${printable(raw)}': ${problem}`);
  }
  return parts;
}

export function validateIdentifier(parts: unknown): Identifier {
  if (!Array.isArray(parts) || parts.some((p) => typeof p !== "string")) {
    throw new IdentifierError("id must be an array of strings");
  }
  for (const part of parts as string[]) {
    const problem = nameProblem(part);
    if (problem) throw new IdentifierError(`invalid identifier: ${problem}`);
  }
  return parts as string[];
}

/** An identifier as one string: the catalog's object id, and how messages and the console name it ("" for the root). */
export function joinIdentifier(parts: Identifier): string {
  return parts.join(DELIMITER);
}

export function formatIdentifier(parts: Identifier, delimiter: string = DELIMITER): string {
  return parts.length === 0 ? delimiter : parts.join(delimiter);
}

/** The `{id}` path segment for a URL. */
export function encodeIdentifier(parts: Identifier, delimiter: string = DELIMITER): string {
  return encodeURIComponent(formatIdentifier(parts, delimiter));
}

export function sameIdentifier(a: Identifier, b: Identifier): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}

function printable(s: string): string {
  // eslint-disable-next-line no-control-regex
  const shown = s.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
  return shown.length > 80 ? `${shown.slice(0, 80)}…` : shown;
}
