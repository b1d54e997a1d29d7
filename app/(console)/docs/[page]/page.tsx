import { notFound } from "next/navigation";
import { DocPageView } from "@/components/docs/doc-page";
import { DOC_PAGES } from "@/lib/doc-pages";
import { docText } from "@/server/doc-files";

export function generateStaticParams() {
  return DOC_PAGES.map((p) => ({ page: p.slug }));
}

export async function generateMetadata({ params }: { params: Promise<{ page: string }> }) {
  const { page: slug } = await params;
  const page = DOC_PAGES.find((p) => p.slug === slug);
  return { title: `${page?.title ?? "Documentation"} · Quiver` };
}

export default async function DocPage({ params }: { params: Promise<{ page: string }> }) {
  const doc = await docText((await params).page);
  if (!doc) notFound();
  return <DocPageView page={doc.page} markdown={doc.markdown} />;
}
