import { TableView } from "@/components/table/table-view";

export default async function TablePage({ params }: { params: Promise<{ id: string[] }> }) {
  const { id } = await params;
  return <TableView table={id.map(decodeURIComponent)} />;
}
