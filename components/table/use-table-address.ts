"use client";
/** The table page's state in its address: tab, version or tag, comparison, and data-tab options. */
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useCallback, useEffect, useRef } from "react";

export function useTableAddress() {
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  // A change asked for before the address shows the previous one builds on that one, so quick changes (two
  // pickers set one after the other) all hold instead of the last undoing the first.
  const pending = useRef<URLSearchParams | null>(null);
  useEffect(() => {
    pending.current = null;
  }, [params]);
  const set = useCallback(
    (changes: Record<string, string | number | undefined | null>) => {
      const next = new URLSearchParams((pending.current ?? params).toString());
      for (const [k, v] of Object.entries(changes)) {
        if (v === undefined || v === null || v === "") next.delete(k);
        else next.set(k, String(v));
      }
      pending.current = next;
      const query = next.toString();
      router.replace(`${pathname}${query ? `?${query}` : ""}`, { scroll: false });
    },
    [params, pathname, router],
  );
  return { get: (k: string) => params.get(k), set };
}
