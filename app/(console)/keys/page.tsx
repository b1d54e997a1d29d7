import { ApiKeysPanel } from "@/components/access/api-keys-panel";
import { PageFrame } from "@/components/shell/page-frame";

export const metadata = { title: "API keys · Quiver" };

export default function KeysPage() {
  return (
    <PageFrame title="API keys" description="Keys let programs call the API. Each has a role and a scope; only a hash is kept, so a key is shown once.">
      <ApiKeysPanel />
    </PageFrame>
  );
}
