import { Suspense } from "react";
import { OperationsPanel } from "@/components/operations/operations-panel";
import { PageFrame } from "@/components/shell/page-frame";

export const metadata = { title: "Operations · Quiver" };

export default function OperationsPage() {
  return (
    <PageFrame
      title="Operations"
      description="The service at a glance: requests, latency, errors, the store, writes, conflicts, caches and maintenance, over every instance of the root."
    >
      <Suspense>
        <OperationsPanel />
      </Suspense>
    </PageFrame>
  );
}
