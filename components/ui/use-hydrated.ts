"use client";
import { useEffect, useState } from "react";

/** True once React has hydrated the page; the attribute it drives lets tests wait for interactivity. */
export function useHydrated(): boolean {
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return hydrated;
}
