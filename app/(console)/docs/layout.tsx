import type { ReactNode } from "react";
import { DocsNav } from "@/components/docs/docs-nav";

export default function DocsLayout({ children }: { children: ReactNode }) {
  return (
    <div className="mx-auto flex w-full max-w-7xl flex-col gap-6 px-6 py-6 md:flex-row">
      <DocsNav />
      <div className="min-w-0 flex-1">{children}</div>
    </div>
  );
}
