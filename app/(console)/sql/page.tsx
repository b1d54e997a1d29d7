import { SqlWorkspace } from "@/components/sql/sql-workspace";
import { PageFrame } from "@/components/shell/page-frame";

export const metadata = { title: "SQL · Quiver" };

export default function SqlPage() {
  return (
    <PageFrame
      title="SQL"
      description="Ask the tables you may read in DuckDB's SQL: name them as in the catalog (shop.items), at a version with AT (VERSION => 3). Read-only; Ctrl+Enter runs."
    >
      <SqlWorkspace />
    </PageFrame>
  );
}
