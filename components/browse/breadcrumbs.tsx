"use client";
import Link from "next/link";
import { namespaceHref, tableHref } from "@/lib/console-links";

export function Breadcrumbs({ database, namespace, table }: { database: string; namespace: string[]; table?: string }) {
  return (
    <nav aria-label="Breadcrumb" className="mb-3 text-sm text-slate-500 dark:text-slate-400">
      <ol className="flex flex-wrap items-center gap-1">
        <li>
          <Link className="hover:underline" href={namespaceHref(database, [])}>
            {database}
          </Link>
        </li>
        {namespace.map((part, i) => (
          <li key={i} className="flex items-center gap-1">
            <span aria-hidden>/</span>
            <Link className="hover:underline" href={namespaceHref(database, namespace.slice(0, i + 1))}>
              {part}
            </Link>
          </li>
        ))}
        {table && (
          <li className="flex items-center gap-1">
            <span aria-hidden>/</span>
            <Link
              aria-current="page"
              className="font-medium text-slate-800 hover:underline dark:text-slate-100"
              href={tableHref(database, [...namespace, table])}
            >
              {table}
            </Link>
          </li>
        )}
      </ol>
    </nav>
  );
}
