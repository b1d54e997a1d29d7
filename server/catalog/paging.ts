/**
 * Paging by an opaque "start after" token over sorted keys: a page costs a binary search plus its own items,
 * whatever its position in the listing.
 */
import "server-only";
import { invalidInput } from "@/server/errors";

export interface Page<T> {
  items: T[];
  pageToken?: string;
}

export function encodePageToken(lastKey: string): string {
  return Buffer.from(JSON.stringify({ after: lastKey })).toString("base64url");
}

/**
 * The key a page starts after. Lance clients also send a plain name as the token (LanceDB's `startAfter`, the
 * directory namespace's own tokens), which is taken as the key itself.
 */
export function decodePageToken(token: string | undefined | null): string | undefined {
  if (!token) return undefined;
  if (token.length > 4096) throw invalidInput("page_token is too long");
  try {
    const parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    if (parsed && typeof parsed.after === "string") return parsed.after;
  } catch {
    // not one of ours: a plain start-after key
  }
  return token;
}

/** Index of the first element of sorted `keys` that is greater than `key`. */
export function upperBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How many keys `accept` is asked about at once (it may ask the store about each). */
const CONCURRENT_CHECKS = 32;

/**
 * Walks sorted keys after the token, keeping those `accept` admits, until `limit` are found. Keys are checked
 * several at a time but never more than the page still needs, so no key past the page's last is looked at.
 * A token is returned only when more keys remain.
 */
export async function pageOf(
  keys: readonly string[],
  token: string | undefined | null,
  limit: number,
  accept: (key: string) => boolean | Promise<boolean> = () => true,
): Promise<Page<string>> {
  const after = decodePageToken(token);
  let i = after === undefined ? 0 : upperBound(keys, after);
  const items: string[] = [];
  while (i < keys.length && items.length < limit) {
    const batch = keys.slice(i, i + Math.min(limit - items.length, CONCURRENT_CHECKS));
    const accepted = await Promise.all(batch.map(async (key) => accept(key)));
    items.push(...batch.filter((_, j) => accepted[j]));
    i += batch.length;
  }
  return { items, pageToken: i < keys.length ? encodePageToken(keys[i - 1]) : undefined };
}
