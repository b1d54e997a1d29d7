"use client";
/**
 * The sidebar's catalog tree: namespaces and, under each, its tables, the root's own tables included. A namespace
 * opens only when it holds something the user can see; its children load when it is opened, and the path to the page
 * shown is open from the start.
 */
import Link from "next/link";
import { useState } from "react";
import { useEntries } from "@/lib/queries/catalog";
import { namespaceHref, tableHref } from "@/lib/console-links";
import { joinIdentifier } from "@/lib/identifiers";

/** The page shown: a namespace, or a table. */
export interface Shown {
  path: string[];
  kind: "namespace" | "table";
}

const isPrefix = (id: string[], path: string[]) => id.length <= path.length && id.every((p, i) => path[i] === p);
const rowClass = (active: boolean) =>
  `flex items-center gap-1 rounded px-1 ${active ? "bg-indigo-50 font-medium text-indigo-800 dark:bg-indigo-950 dark:text-indigo-200" : ""}`;

function NamespaceNode({ database, id, hasChildren, shown }: { database: string; id: string[]; hasChildren: boolean; shown: Shown }) {
  const [open, setOpen] = useState(hasChildren && isPrefix(id, shown.path) && id.length < shown.path.length);
  const active = shown.kind === "namespace" && joinIdentifier(id) === joinIdentifier(shown.path);
  const name = id[id.length - 1];
  return (
    <li>
      <div className={rowClass(active)}>
        {hasChildren ? (
          <button
            type="button"
            aria-label={`${open ? "Collapse" : "Expand"} ${name}`}
            aria-expanded={open}
            onClick={() => setOpen(!open)}
            className="w-4 text-xs text-slate-500 focus-visible:outline-2 focus-visible:outline-indigo-500"
          >
            {open ? "▾" : "▸"}
          </button>
        ) : (
          <span className="w-4" title="empty" />
        )}
        <Link href={namespaceHref(database, id)} className="truncate py-0.5 text-sm hover:underline" title={`namespace ${joinIdentifier(id)}`}>
          {name}
        </Link>
      </div>
      {open && <Children database={database} parent={id} shown={shown} />}
    </li>
  );
}

function TableLeaf({ database, id, declaredOnly, shown }: { database: string; id: string[]; declaredOnly: boolean; shown: Shown }) {
  const active = shown.kind === "table" && joinIdentifier(id) === joinIdentifier(shown.path);
  return (
    <li>
      <Link
        href={tableHref(database, id)}
        className={`${rowClass(active)} py-0.5 text-sm hover:underline`}
        title={`table ${joinIdentifier(id)}${declaredOnly ? " (declared, no data yet)" : ""}`}
        aria-current={active ? "page" : undefined}
      >
        <span className="w-4 text-center text-xs text-slate-400" aria-hidden>
          ▦
        </span>
        <span className={`truncate ${declaredOnly ? "italic text-slate-500" : ""}`}>{id[id.length - 1]}</span>
      </Link>
    </li>
  );
}

function Children({ database, parent, shown }: { database: string; parent: string[]; shown: Shown }) {
  const namespaces = useEntries(database, parent, "namespace", "");
  const tables = useEntries(database, parent, "table", "");
  if (namespaces.isPending || tables.isPending) return <p className="pl-6 text-xs text-slate-400">loading…</p>;
  if (namespaces.isError || tables.isError) return <p className="pl-6 text-xs text-red-600">could not load</p>;
  const childNamespaces = namespaces.data.pages.flatMap((p) => p.entries);
  const childTables = tables.data.pages.flatMap((p) => p.entries);
  if (childNamespaces.length === 0 && childTables.length === 0)
    return <p className="px-1 pt-2 text-xs text-slate-500">{parent.length === 0 ? "No namespaces or tables yet." : "empty"}</p>;
  const more = (list: typeof namespaces) =>
    list.hasNextPage && (
      <li>
        <button type="button" className="pl-5 text-xs text-indigo-600 underline" onClick={() => list.fetchNextPage()}>
          more…
        </button>
      </li>
    );
  return (
    <ul className={parent.length ? "pl-3" : ""}>
      {childNamespaces.map((e) => (
        <NamespaceNode key={e.name} database={database} id={[...parent, e.name]} hasChildren={e.has_children ?? true} shown={shown} />
      ))}
      {more(namespaces)}
      {childTables.map((e) => (
        <TableLeaf key={e.name} database={database} id={[...parent, e.name]} declaredOnly={e.declared_only ?? false} shown={shown} />
      ))}
      {more(tables)}
    </ul>
  );
}

export function NamespaceTree({ database, shown }: { database: string; shown: Shown }) {
  return (
    <nav aria-label="Catalog" className="w-60 shrink-0 overflow-y-auto border-r border-slate-200 px-2 py-3 dark:border-slate-800">
      <Link href={namespaceHref(database, [])} className="block px-1 pb-1 text-xs font-semibold uppercase tracking-wide text-slate-500 hover:underline">
        Catalog
      </Link>
      <Children database={database} parent={[]} shown={shown} />
    </nav>
  );
}
