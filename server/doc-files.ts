/**
 * The documentation shipped with the server: the Markdown files of its own directory that lib/doc-pages.ts names,
 * read from where the server runs. They are the application's files, never the data root's state.
 */
import "server-only";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { DOC_PAGES, type DocPage } from "@/lib/doc-pages";

export async function docText(slug: string): Promise<{ page: DocPage; markdown: string } | null> {
  const page = DOC_PAGES.find((p) => p.slug === slug);
  if (!page) return null;
  // Named from a fixed list at run time: the build is told not to trace the whole directory for it.
  return { page, markdown: await readFile(path.join(/*turbopackIgnore: true*/ process.cwd(), page.file), "utf8") };
}
