import { AuditPanel } from "@/components/access/audit-panel";
import { PageFrame } from "@/components/shell/page-frame";

export const metadata = { title: "Audit log · Quiver" };

export default function AuditPage() {
  return (
    <PageFrame title="Audit log" description="Every mutating call and every refused call: who, what, where, and how it ended.">
      <AuditPanel />
    </PageFrame>
  );
}
