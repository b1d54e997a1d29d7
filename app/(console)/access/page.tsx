import { GrantsPanel } from "@/components/access/grants-panel";
import { PageFrame } from "@/components/shell/page-frame";

export const metadata = { title: "Access · Quiver" };

export default function AccessPage() {
  return (
    <PageFrame
      title="Access"
      description="Roles on namespace subtrees and tables for users, groups and API keys. Declaring a table makes the declarer its admin."
    >
      <GrantsPanel />
    </PageFrame>
  );
}
