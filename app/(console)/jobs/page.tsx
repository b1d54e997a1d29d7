import { JobsPanel } from "@/components/operations/jobs-panel";
import { ServiceActivity } from "@/components/operations/service-activity";
import { PageFrame } from "@/components/shell/page-frame";

export const metadata = { title: "Jobs · Quiver" };

export default function JobsPage() {
  return (
    <PageFrame
      title="Jobs"
      description="Maintenance across every table (what runs now, what finished, and what failed, with why), the automatic policy, and the heavy requests of every instance."
    >
      <div className="flex flex-col gap-8">
        <JobsPanel />
        <ServiceActivity />
      </div>
    </PageFrame>
  );
}
