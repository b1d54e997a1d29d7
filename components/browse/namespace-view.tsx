"use client";
import Link from "next/link";
import { useEffect, useRef, useState } from "react";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEntries, useNamespace } from "@/lib/queries/catalog";
import { namespaceHref, tableHref } from "@/lib/console-links";
import { Badge, TextInput } from "../ui/controls";
import { Empty, ErrorBanner, Loading } from "../ui/states";
import { PropertiesTable } from "../ui/properties-editor";
import { Breadcrumbs } from "./breadcrumbs";
import { CreateDialog, DropNamespaceDialog } from "./namespace-dialogs";
import { joinIdentifier } from "@/lib/identifiers";

function useDebounced<T>(value: T, ms: number): T {
  const [debounced, setDebounced] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setDebounced(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return debounced;
}

/** Tables of a namespace, paged from the server and virtualized so that tens of thousands scroll smoothly. */
function TableList({ database, namespace, filter }: { database: string; namespace: string[]; filter: string }) {
  const entries = useEntries(database, namespace, "table", filter);
  const rows = entries.data?.pages.flatMap((p) => p.entries) ?? [];
  const parent = useRef<HTMLDivElement>(null);
  // eslint-disable-next-line react-hooks/incompatible-library -- this app does not run the React Compiler, so nothing memoizes it
  const virtualizer = useVirtualizer({ count: rows.length, getScrollElement: () => parent.current, estimateSize: () => 36, overscan: 20 });
  const items = virtualizer.getVirtualItems();
  const last = items[items.length - 1];
  useEffect(() => {
    if (last && last.index >= rows.length - 50 && entries.hasNextPage && !entries.isFetchingNextPage) void entries.fetchNextPage();
  }, [last, rows.length, entries]);

  if (entries.isPending) return <Loading label="Loading tables…" />;
  if (entries.isError) return <ErrorBanner error={entries.error} />;
  if (rows.length === 0)
    return (
      <Empty title={filter ? `No table matches “${filter}”` : "No tables here yet"}>
        {!filter && "Declare one, or create it by writing data through the API."}
      </Empty>
    );
  return (
    <div>
      <p className="mb-1 text-xs text-slate-500" data-testid="table-count">
        {rows.length}
        {entries.hasNextPage ? "+" : ""} {rows.length === 1 && !entries.hasNextPage ? "table" : "tables"}
      </p>
      <div
        ref={parent}
        style={{ height: Math.min(28 * 16, rows.length * 36 + 2) }}
        className="overflow-auto rounded-md border border-slate-200 dark:border-slate-800"
        role="list"
        aria-label="Tables"
      >
        <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
          {items.map((item) => {
            const row = rows[item.index];
            return (
              <div
                key={row.name}
                role="listitem"
                className="absolute left-0 flex w-full items-center justify-between border-b border-slate-100 px-3 dark:border-slate-800"
                style={{ top: item.start, height: item.size }}
              >
                <Link
                  href={tableHref(database, [...namespace, row.name])}
                  className="truncate font-mono text-sm text-indigo-700 hover:underline dark:text-indigo-300"
                >
                  {row.name}
                </Link>
                {row.declared_only ? <Badge tone="amber">declared only</Badge> : <Badge tone="green">created</Badge>}
              </div>
            );
          })}
        </div>
      </div>
      {entries.isFetchingNextPage && <Loading label="Loading more tables…" />}
    </div>
  );
}

const FolderIcon = () => (
  <svg viewBox="0 0 16 16" className="h-3.5 w-3.5 fill-slate-400" aria-hidden="true">
    <path d="M1.5 3A1.5 1.5 0 0 1 3 1.5h3.3l1.5 1.75H13A1.5 1.5 0 0 1 14.5 4.75v7.75A1.5 1.5 0 0 1 13 14H3a1.5 1.5 0 0 1-1.5-1.5z" />
  </svg>
);

function ChildNamespaces({ database, namespace }: { database: string; namespace: string[] }) {
  const entries = useEntries(database, namespace, "namespace", "");
  const names = entries.data?.pages.flatMap((p) => p.entries.map((e) => e.name)) ?? [];
  if (entries.isPending) return <Loading label="Loading namespaces…" />;
  if (entries.isError) return <ErrorBanner error={entries.error} />;
  if (names.length === 0)
    return (
      <p className="text-sm text-slate-500">
        {namespace.length === 0
          ? "No namespaces yet: tables can sit at the root, as below. “New namespace” makes one to group tables in; a table's identifier then names it (sales$orders)."
          : "No child namespaces."}
      </p>
    );
  return (
    <ul className="flex flex-wrap gap-2" aria-label="Child namespaces">
      {names.map((n) => (
        <li key={n}>
          <Link
            href={namespaceHref(database, [...namespace, n])}
            className="inline-flex items-center gap-1.5 rounded-md border border-slate-200 px-3 py-1.5 text-sm hover:bg-slate-50 dark:border-slate-700 dark:hover:bg-slate-800"
          >
            <FolderIcon />
            {n}
          </Link>
        </li>
      ))}
      {entries.hasNextPage && (
        <li>
          <button type="button" className="px-2 py-1.5 text-sm text-indigo-600 underline" onClick={() => entries.fetchNextPage()}>
            more…
          </button>
        </li>
      )}
    </ul>
  );
}

export function NamespaceView({ database, namespace }: { database: string; namespace: string[] }) {
  const [filter, setFilter] = useState("");
  const debounced = useDebounced(filter, 200);
  const described = useNamespace(database, namespace);
  const title = namespace.length ? namespace[namespace.length - 1] : "Root namespace";
  return (
    <main className="min-w-0 flex-1 px-6 py-5">
      <Breadcrumbs database={database} namespace={namespace} />
      <div className="mb-5 flex flex-wrap items-start justify-between gap-3">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">{title}</h1>
          <p className="text-sm text-slate-500">
            namespace {namespace.length ? joinIdentifier(namespace) : "(root)"} in database {database}
          </p>
        </div>
        <div className="flex flex-wrap gap-2">
          <CreateDialog kind="table" database={database} namespace={namespace} />
          <CreateDialog kind="namespace" database={database} namespace={namespace} />
          {namespace.length > 0 && <DropNamespaceDialog database={database} namespace={namespace} />}
        </div>
      </div>
      {described.isError ? (
        <ErrorBanner error={described.error} />
      ) : (
        <div className="grid gap-6 lg:grid-cols-[1fr_18rem]">
          <div className="flex min-w-0 flex-col gap-6">
            <section aria-labelledby="ns-children">
              <h2 id="ns-children" className="mb-2 font-semibold">
                Namespaces
              </h2>
              <ChildNamespaces database={database} namespace={namespace} />
            </section>
            <section aria-labelledby="ns-tables">
              <div className="mb-2 flex items-center justify-between gap-3">
                <h2 id="ns-tables" className="font-semibold">
                  Tables
                </h2>
                <TextInput
                  type="search"
                  aria-label="Filter tables"
                  placeholder="Filter tables by name"
                  value={filter}
                  onChange={(e) => setFilter(e.target.value)}
                  className="w-64"
                />
              </div>
              <TableList database={database} namespace={namespace} filter={debounced} />
            </section>
          </div>
          <aside aria-labelledby="ns-props" className="self-start rounded-lg border border-slate-200 p-4 dark:border-slate-800">
            <h2 id="ns-props" className="mb-2 font-semibold">
              Properties
            </h2>
            {described.isPending ? <Loading /> : <PropertiesTable properties={described.data?.properties} />}
          </aside>
        </div>
      )}
    </main>
  );
}
