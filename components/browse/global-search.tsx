"use client";
/** Jump to a namespace or table by name; `/` or Ctrl+K focuses it, arrows choose, Enter goes. */
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { useSearch } from "@/lib/queries/catalog";
import { namespaceHref, tableHref } from "@/lib/console-links";
import { useDatabase } from "@/lib/use-database";
import { joinIdentifier } from "@/lib/identifiers";

export function GlobalSearch() {
  const database = useDatabase();
  const router = useRouter();
  const input = useRef<HTMLInputElement>(null);
  const [q, setQ] = useState("");
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const results = useSearch(database, q);
  const items = [
    ...(results.data?.namespaces ?? []).map((id) => ({ id, kind: "namespace" as const, href: namespaceHref(database, id) })),
    ...(results.data?.tables ?? []).map((id) => ({ id, kind: "table" as const, href: tableHref(database, id) })),
  ];

  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      const target = e.target as HTMLElement;
      const typing = target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT" || target.isContentEditable;
      if ((e.key === "k" && (e.ctrlKey || e.metaKey)) || (e.key === "/" && !typing)) {
        e.preventDefault();
        input.current?.focus();
        setOpen(true);
      }
    }
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  function go(href: string) {
    setOpen(false);
    setQ("");
    input.current?.blur();
    router.push(href);
  }

  return (
    <div className="relative">
      <input
        ref={input}
        type="search"
        role="combobox"
        aria-expanded={open && items.length > 0}
        aria-controls="global-search-results"
        aria-label="Search namespaces and tables"
        placeholder="Search…  (/ or Ctrl+K)"
        value={q}
        onChange={(e) => {
          setQ(e.target.value);
          setActive(0);
          setOpen(true);
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => setTimeout(() => setOpen(false), 150)}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown") setActive((a) => Math.min(a + 1, items.length - 1));
          else if (e.key === "ArrowUp") setActive((a) => Math.max(a - 1, 0));
          else if (e.key === "Enter" && items[active]) go(items[active].href);
          else if (e.key === "Escape") input.current?.blur();
          else return;
          e.preventDefault();
        }}
        className="w-64 rounded-md border border-slate-300 bg-white px-2 py-1 text-sm dark:border-slate-600 dark:bg-slate-900 focus-visible:outline-2 focus-visible:outline-indigo-500"
      />
      {open && q && (
        <ul
          id="global-search-results"
          role="listbox"
          className="absolute z-20 mt-1 max-h-80 w-96 overflow-auto rounded-md border border-slate-200 bg-white shadow-lg dark:border-slate-700 dark:bg-slate-900"
        >
          {items.length === 0 && <li className="px-3 py-2 text-sm text-slate-500">{results.isFetching ? "Searching…" : "Nothing matches"}</li>}
          {items.map((item, i) => (
            <li
              key={`${item.kind}:${joinIdentifier(item.id)}`}
              role="option"
              aria-selected={i === active}
              onMouseDown={(e) => {
                e.preventDefault();
                go(item.href);
              }}
              className={`flex cursor-pointer items-center justify-between gap-3 px-3 py-1.5 text-sm ${i === active ? "bg-indigo-50 dark:bg-indigo-950" : ""}`}
            >
              <span className="truncate font-mono">{joinIdentifier(item.id)}</span>
              <span className="text-xs text-slate-500">{item.kind}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
