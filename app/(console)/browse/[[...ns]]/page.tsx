import { NamespacePage } from "@/components/browse/catalog-page";

export default async function BrowsePage({ params }: { params: Promise<{ ns?: string[] }> }) {
  const { ns = [] } = await params;
  return <NamespacePage namespace={ns.map(decodeURIComponent)} />;
}
