"use client";
/** The table page's state in its address: tab, version or tag, comparison, and data-tab options. */
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useCallback } from "react";

export function useTableAddress() {
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const set = useCallback(
    (changes: Record<string, string | number | undefined | null>) => {
      const next = new URLSearchParams(params.toString());
      for (const [k, v] of Object.entries(changes)) {
        if (v === undefined || v === null || v === "") next.delete(k);
        else next.set(k, String(v));
      }
      const query = next.toString();
      router.replace(`${pathname}${query ? `?${query}` : ""}`, { scroll: false });
    },
    [params, pathname, router],
  );
  return { get: (k: string) => params.get(k), set };
}
