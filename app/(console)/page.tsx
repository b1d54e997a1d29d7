import { NamespacePage } from "@/components/browse/catalog-page";

export default function Home() {
  return <NamespacePage namespace={[]} />;
}
