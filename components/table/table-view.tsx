"use client";
import Link from "next/link";
import { useTable } from "@/lib/queries/catalog";
import { tableHref } from "@/lib/console-links";
import { useDatabase } from "@/lib/use-database";
import { Breadcrumbs } from "../browse/breadcrumbs";
import { NamespaceTree } from "../browse/namespace-tree";
import { DropTableDialog } from "../browse/namespace-dialogs";
import { Badge } from "../ui/controls";
import { ErrorBanner } from "../ui/states";
import { ColumnsTab } from "./columns-tab";
import { DataTab } from "./data-tab";
import { IndexesTab } from "./indexes-tab";
import { OverviewTab } from "./overview-tab";
import { SchemaTab } from "./schema-tab";
import { TagsTab } from "./tags-tab";
import { UploadTab } from "./upload-tab";
import { ChangesTab } from "./changes-tab";
import { MapTab } from "../map/map-tab";
import { useTableAddress } from "./use-table-address";
import { VersionsTab } from "./versions-tab";
import { joinIdentifier } from "@/lib/identifiers";

const TABS = [
  ["overview", "Overview", OverviewTab],
  ["schema", "Schema", SchemaTab],
  ["data", "Data", DataTab],
  ["map", "Map", MapTab],
  ["versions", "Versions", VersionsTab],
  ["changes", "Changes", ChangesTab],
  ["tags", "Tags", TagsTab],
  ["indexes", "Indexes", IndexesTab],
  ["columns", "Columns", ColumnsTab],
  ["upload", "Upload", UploadTab],
] as const;

export function TableView({ table }: { table: string[] }) {
  const database = useDatabase();
  const address = useTableAddress();
  const tab = TABS.find(([id]) => id === address.get("tab")) ?? TABS[0];
  const described = useTable(database, table);
  const Tab = tab[2];
  return (
    <>
      <NamespaceTree database={database} shown={{ path: table, kind: "table" }} />
      <main className="min-w-0 flex-1 px-6 py-5">
        <Breadcrumbs database={database} namespace={table.slice(0, -1)} table={table[table.length - 1]} />
        <div className="mb-4 flex flex-wrap items-start justify-between gap-3">
          <div>
            <h1 className="flex items-center gap-3 text-2xl font-semibold tracking-tight">
              {table[table.length - 1]}
              {described.data &&
                (described.data.is_only_declared ? <Badge tone="amber">declared only</Badge> : <Badge tone="green">v{described.data.version}</Badge>)}
            </h1>
            <p className="font-mono text-xs text-slate-500">{joinIdentifier(table)}</p>
          </div>
          <DropTableDialog database={database} table={table} />
        </div>
        {described.isError ? (
          <ErrorBanner error={described.error} />
        ) : (
          <>
            <nav aria-label="Table sections" className="mb-5 flex flex-wrap gap-1 border-b border-slate-200 dark:border-slate-800">
              {TABS.map(([id, label]) => (
                <Link
                  key={id}
                  href={tableHref(database, table, id)}
                  onClick={(e) => {
                    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
                    // A tab is the same page in another state: the address changes in place, with no round trip to the server.
                    e.preventDefault();
                    window.history.pushState(null, "", tableHref(database, table, id));
                  }}
                  aria-current={tab[0] === id ? "page" : undefined}
                  className={`-mb-px border-b-2 px-3 py-2 text-sm focus-visible:outline-2 focus-visible:outline-indigo-500 ${
                    tab[0] === id
                      ? "border-indigo-600 font-medium text-indigo-700 dark:text-indigo-300"
                      : "border-transparent text-slate-600 hover:text-slate-900 dark:text-slate-300 dark:hover:text-white"
                  }`}
                >
                  {label}
                </Link>
              ))}
            </nav>
            <Tab database={database} table={table} />
          </>
        )}
      </main>
    </>
  );
}
