"use client";
/** The database the console addresses: the `db` search parameter, so every address is shareable. */
import { useSearchParams } from "next/navigation";

export const DEFAULT_DATABASE = "default";

export function useDatabase(): string {
  return useSearchParams().get("db") || DEFAULT_DATABASE;
}

/** A console link that keeps the selected database. */
export function withDatabase(href: string, database: string): string {
  if (database === DEFAULT_DATABASE) return href;
  return `${href}${href.includes("?") ? "&" : "?"}db=${encodeURIComponent(database)}`;
}
