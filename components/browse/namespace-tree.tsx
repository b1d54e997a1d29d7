"use client";
/** The sidebar's namespace tree: children load when a node is opened. */
import Link from "next/link";
import { useState } from "react";
import { useEntries } from "@/lib/queries/catalog";
import { namespaceHref } from "@/lib/console-links";
import { joinIdentifier } from "@/lib/identifiers";

function Node({ database, id, current }: { database: string; id: string[]; current: string[] }) {
  const onPath = id.every((p, i) => current[i] === p) && id.length <= current.length;
  const [open, setOpen] = useState(onPath && id.length < current.length);
  const active = onPath && id.length === current.length;
  return (
    <li>
      <div
        className={`flex items-center gap-1 rounded px-1 ${active ? "bg-indigo-50 font-medium text-indigo-800 dark:bg-indigo-950 dark:text-indigo-200" : ""}`}
      >
        <button
          type="button"
          aria-label={`${open ? "Collapse" : "Expand"} ${id[id.length - 1]}`}
          aria-expanded={open}
          onClick={() => setOpen(!open)}
          className="w-4 text-xs text-slate-500 focus-visible:outline-2 focus-visible:outline-indigo-500"
        >
          {open ? "▾" : "▸"}
        </button>
        <Link href={namespaceHref(database, id)} className="truncate py-0.5 text-sm hover:underline" title={joinIdentifier(id)}>
          {id[id.length - 1]}
        </Link>
      </div>
      {open && <Children database={database} parent={id} current={current} />}
    </li>
  );
}

function Children({ database, parent, current }: { database: string; parent: string[]; current: string[] }) {
  const entries = useEntries(database, parent, "namespace", "");
  const names = entries.data?.pages.flatMap((p) => p.entries.map((e) => e.name)) ?? [];
  if (entries.isPending) return <p className="pl-6 text-xs text-slate-400">loading…</p>;
  if (entries.isError) return <p className="pl-6 text-xs text-red-600">could not load</p>;
  if (names.length === 0 && parent.length === 0)
    return (
      <p className="px-1 pt-2 text-xs text-slate-500" data-testid="no-namespaces-hint">
        No namespaces yet: every table sits at the root. “New namespace” on the root page makes one to group tables in.
      </p>
    );
  return (
    <ul className="pl-3">
      {names.map((name) => (
        <Node key={name} database={database} id={[...parent, name]} current={current} />
      ))}
      {entries.hasNextPage && (
        <li>
          <button type="button" className="pl-5 text-xs text-indigo-600 underline" onClick={() => entries.fetchNextPage()}>
            more…
          </button>
        </li>
      )}
    </ul>
  );
}

export function NamespaceTree({ database, current }: { database: string; current: string[] }) {
  return (
    <nav aria-label="Namespaces" className="w-60 shrink-0 overflow-y-auto border-r border-slate-200 px-2 py-3 dark:border-slate-800">
      <Link href={namespaceHref(database, [])} className="block px-1 text-xs font-semibold uppercase tracking-wide text-slate-500 hover:underline">
        Namespaces
      </Link>
      <Children database={database} parent={[]} current={current} />
    </nav>
  );
}
