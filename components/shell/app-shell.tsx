"use client";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import type { ReactNode } from "react";
import { signOut } from "next-auth/react";
import { useDatabases, useWhoAmI } from "@/lib/queries/access";
import { useDatabase, withDatabase } from "@/lib/use-database";
import type { Theme } from "@/lib/theme";
import { SERVICE_VERSION } from "@/lib/service";
import { ThemeToggle } from "./theme-toggle";
import { Button, Select } from "../ui/controls";
import { useHydrated } from "../ui/use-hydrated";
import { GlobalSearch } from "../browse/global-search";

/** The pages, each shown to whom may use it: anyone signed in, administrators, or also a metrics key's holder. */
const NAV = [
  { href: "/", label: "Browse", for: "anyone" },
  { href: "/sql", label: "SQL", for: "anyone" },
  { href: "/operations", label: "Operations", for: "metrics" },
  { href: "/keys", label: "API keys", for: "admin" },
  { href: "/access", label: "Access", for: "admin" },
  { href: "/jobs", label: "Jobs", for: "admin" },
  { href: "/audit", label: "Audit log", for: "admin" },
  { href: "/docs", label: "API reference", for: "anyone" },
] as const;

function DatabaseSwitcher({ admin }: { admin: boolean }) {
  const database = useDatabase();
  const router = useRouter();
  const databases = useDatabases(admin);
  const options = databases.data?.databases ?? [database];
  return (
    <label className="flex items-center gap-2 text-xs text-slate-500 dark:text-slate-400">
      Database
      <Select aria-label="Database" value={database} onChange={(e) => router.push(withDatabase("/", e.target.value))} disabled={!admin}>
        {[...new Set([database, ...options])].map((d) => (
          <option key={d} value={d}>
            {d}
          </option>
        ))}
      </Select>
    </label>
  );
}

export function AppShell({ children, theme, userName }: { children: ReactNode; theme: Theme; userName: string }) {
  const database = useDatabase();
  const pathname = usePathname();
  const whoami = useWhoAmI(database);
  const admin = whoami.data?.admin ?? false;
  const readsMetrics = whoami.data?.metrics ?? false;
  const hydrated = useHydrated();
  return (
    <div className="flex min-h-screen flex-col" data-hydrated={hydrated}>
      <header className="flex flex-wrap items-center gap-4 border-b border-slate-200 px-4 py-2 dark:border-slate-800">
        <Link href={withDatabase("/", database)} className="text-lg font-semibold tracking-tight">
          Quiver
        </Link>
        <nav aria-label="Main" className="flex flex-wrap gap-1">
          {NAV.filter((n) => n.for === "anyone" || (n.for === "admin" ? admin : readsMetrics)).map((n) => {
            const active = n.href === "/" ? pathname === "/" || pathname.startsWith("/browse") || pathname.startsWith("/table") : pathname.startsWith(n.href);
            return (
              <Link
                key={n.href}
                href={withDatabase(n.href, database)}
                aria-current={active ? "page" : undefined}
                className={`rounded-md px-2 py-1 text-sm focus-visible:outline-2 focus-visible:outline-indigo-500 ${
                  active
                    ? "bg-slate-100 font-medium text-slate-900 dark:bg-slate-800 dark:text-white"
                    : "text-slate-600 hover:text-slate-900 dark:text-slate-300 dark:hover:text-white"
                }`}
              >
                {n.label}
              </Link>
            );
          })}
        </nav>
        <div className="ml-auto flex flex-wrap items-center gap-3">
          <GlobalSearch />
          <DatabaseSwitcher admin={admin} />
          <ThemeToggle initial={theme} />
          <span className="text-sm text-slate-600 dark:text-slate-300" data-testid="signed-in-user">
            {userName}
          </span>
          <Button variant="secondary" onClick={() => signOut({ callbackUrl: "/signin" })}>
            Sign out
          </Button>
        </div>
      </header>
      <div className="flex flex-1">{children}</div>
      <footer className="border-t border-slate-200 px-4 py-2 text-xs text-slate-500 dark:border-slate-800 dark:text-slate-400">
        Quiver <span data-testid="version">version {SERVICE_VERSION}</span>
      </footer>
    </div>
  );
}
