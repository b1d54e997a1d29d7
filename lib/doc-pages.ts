/**
 * The documentation pages the console shows beside the API reference: each a Markdown file of the repository, at
 * `/docs/<slug>`. Links between them become console addresses; links to other files of the repository stay text.
 */
export const DOC_PAGES = [
  { slug: "readme", file: "README.md", title: "Overview" },
  { slug: "running", file: "docs/running.md", title: "Running Quiver" },
  { slug: "object-storage", file: "docs/object-storage.md", title: "Object storage" },
  { slug: "authentication", file: "docs/authentication.md", title: "Authentication" },
  { slug: "console", file: "docs/console.md", title: "The console" },
  { slug: "clients", file: "docs/clients.md", title: "Clients" },
  { slug: "api", file: "docs/api.md", title: "The API" },
  { slug: "guarantees", file: "docs/guarantees.md", title: "Guarantees" },
  { slug: "operations", file: "docs/operations.md", title: "Operations" },
  { slug: "benchmarks", file: "docs/benchmarks.md", title: "Benchmarks" },
  { slug: "contributing", file: "docs/contributing.md", title: "Contributing" },
  { slug: "architecture", file: "ARCHITECTURE.md", title: "Architecture" },
] as const;

export type DocPage = (typeof DOC_PAGES)[number];

/** Joins a relative path to the directory of `from`, both relative to the repository's root; null if it leaves it. */
function resolve(from: string, relative: string): string | null {
  const parts = from.split("/").slice(0, -1);
  for (const part of relative.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (!parts.length) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join("/");
}

/**
 * Where a link of the page `from` leads in the console: another page (with its anchor), an anchor of this page, an
 * outside address as it is; null for a file of the repository that is no page (it is shown as text).
 */
export function docHref(from: DocPage, href: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("//")) return href;
  const [path, anchor] = href.split("#") as [string, string | undefined];
  if (path === "") return `#${anchor ?? ""}`;
  const file = resolve(from.file, decodeURIComponent(path));
  const page = DOC_PAGES.find((p) => p.file === file);
  if (!page) return null;
  return `/docs/${page.slug}${anchor ? `#${anchor}` : ""}`;
}

/** GitHub's anchor of a heading's text: lower case, punctuation but hyphens and underscores dropped, spaces made hyphens. */
export const headingSlug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");

/** Anchors for a document's headings in order, a repeated one numbered as GitHub numbers it. */
export function anchorMaker(): (text: string) => string {
  const seen = new Map<string, number>();
  return (text) => {
    const base = headingSlug(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return count ? `${base}-${count}` : base;
  };
}
