import { JobsPanel } from "@/components/operations/jobs-panel";
import { PageFrame } from "@/components/shell/page-frame";

export const metadata = { title: "Jobs · Quiver" };

export default function JobsPage() {
  return (
    <PageFrame title="Jobs" description="Maintenance across every table: what runs now, what finished, and what failed, with why.">
      <JobsPanel />
    </PageFrame>
  );
}
