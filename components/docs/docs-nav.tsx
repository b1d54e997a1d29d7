"use client";
/** The documentation's pages and the API reference, the current one marked. */
import Link from "next/link";
import { usePathname } from "next/navigation";
import { DOC_PAGES } from "@/lib/doc-pages";

export function DocsNav() {
  const pathname = usePathname();
  const entries = [{ href: "/docs", title: "API reference" }, ...DOC_PAGES.map((p) => ({ href: `/docs/${p.slug}`, title: p.title }))];
  return (
    <nav aria-label="Documentation" className="flex shrink-0 flex-row flex-wrap gap-1 text-sm md:w-48 md:flex-col">
      {entries.map((e) => (
        <Link
          key={e.href}
          href={e.href}
          aria-current={pathname === e.href ? "page" : undefined}
          className={`rounded px-2 py-1 ${pathname === e.href ? "bg-slate-200 font-medium dark:bg-slate-800" : "text-slate-600 hover:bg-slate-100 dark:text-slate-300 dark:hover:bg-slate-900"}`}
        >
          {e.title}
        </Link>
      ))}
    </nav>
  );
}
