"use client";
/** Loading, empty and error states: designed, never blank, and errors show the API's title and detail. */
import type { ReactNode } from "react";
import { ApiError } from "@/lib/api-client";

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <div role="status" className="flex items-center gap-2 py-6 text-sm text-slate-500 dark:text-slate-400">
      <span className="h-4 w-4 animate-spin rounded-full border-2 border-slate-300 border-t-indigo-600" aria-hidden />
      {label}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="rounded-lg border border-dashed border-slate-300 px-6 py-10 text-center dark:border-slate-700">
      <p className="font-medium text-slate-700 dark:text-slate-200">{title}</p>
      {children && <div className="mt-1 text-sm text-slate-500 dark:text-slate-400">{children}</div>}
    </div>
  );
}

export function ErrorBanner({ error, onDismiss }: { error: unknown; onDismiss?: () => void }) {
  if (!error) return null;
  const api = error instanceof ApiError ? error : null;
  return (
    <div
      role="alert"
      className="flex items-start justify-between gap-4 rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
    >
      <div>
        <p className="font-semibold">{api ? `${api.title} (${[api.status, api.codeName].filter(Boolean).join(", ")})` : "Something went wrong"}</p>
        <p>{api ? api.detail : error instanceof Error ? error.message : String(error)}</p>
        {api?.requestId && <p className="mt-1 text-xs opacity-70">request {api.requestId}</p>}
      </div>
      {onDismiss && (
        <button type="button" onClick={onDismiss} className="text-xs underline" aria-label="Dismiss error">
          Dismiss
        </button>
      )}
    </div>
  );
}
