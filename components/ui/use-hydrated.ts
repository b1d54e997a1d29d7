"use client";
import { useSyncExternalStore } from "react";

const noSubscription = () => () => {};

/** True once React has hydrated the page; the attribute it drives lets tests wait for interactivity. */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}
