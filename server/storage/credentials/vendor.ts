/** What every cloud's way of vending credentials offers; see index.ts for which one a root uses. */
import "server-only";
export type Access = "read" | "write";

export interface ScopedCredentials {
  /** Lance storage options that carry the credentials, with `expires_at_millis` so that clients refresh them. */
  storageOptions: Record<string, string>;
  expiresAtMillis: number;
  /** The URI prefix they reach, for the audit log. */
  scope: string;
}

export interface Vendor {
  /** Checks at start, where the store must be asked, that it can vend as configured: a ConfigError says what is missing. */
  check?(): Promise<void>;
  /** Credentials for the objects below `path` (a table's prefix in the bucket, no slash at either end). */
  vend(path: string, access: Access, now: number, who: string): Promise<ScopedCredentials>;
}

/** The options among `names` that the service's own storage options set: connection settings, never secrets. */
export function passedOn(options: Record<string, string>, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.filter((name) => options[name]).map((name) => [name, options[name]]));
}
