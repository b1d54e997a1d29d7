/** One page of the documentation, rendered from its Markdown: headings with GitHub's anchors, links kept in the console. */
import Link from "next/link";
import type { ReactNode } from "react";
import Markdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import { anchorMaker, docHref, type DocPage } from "@/lib/doc-pages";

/** The text of a heading's children, as its anchor is made from. */
function textOf(node: ReactNode): string {
  if (typeof node === "string" || typeof node === "number") return String(node);
  if (Array.isArray(node)) return node.map(textOf).join("");
  if (node && typeof node === "object" && "props" in node) return textOf((node.props as { children?: ReactNode }).children);
  return "";
}

export function DocPageView({ page, markdown }: { page: DocPage; markdown: string }) {
  const anchor = anchorMaker();
  const heading =
    (Tag: "h1" | "h2" | "h3" | "h4", className: string) =>
    ({ children }: { children?: ReactNode }) => {
      const id = anchor(textOf(children));
      return (
        <Tag id={id} className={`group scroll-mt-4 ${className}`}>
          {children}
          <a href={`#${id}`} aria-hidden className="ml-2 text-slate-400 opacity-0 group-hover:opacity-100">
            #
          </a>
        </Tag>
      );
    };
  const components: Components = {
    h1: heading("h1", "mb-4 text-2xl font-semibold tracking-tight"),
    h2: heading("h2", "mt-10 mb-3 border-b border-slate-200 pb-1 text-xl font-semibold dark:border-slate-800"),
    h3: heading("h3", "mt-8 mb-2 text-lg font-semibold"),
    h4: heading("h4", "mt-6 mb-2 font-semibold"),
    p: ({ children }) => <p className="my-3 leading-relaxed">{children}</p>,
    ul: ({ children }) => <ul className="my-3 list-disc space-y-1 pl-6">{children}</ul>,
    ol: ({ children }) => <ol className="my-3 list-decimal space-y-1 pl-6">{children}</ol>,
    a: ({ href = "", children }) => {
      const to = docHref(page, href);
      if (to === null) return <span className="underline decoration-dotted">{children}</span>;
      if (to.startsWith("/"))
        return (
          <Link href={to} className="text-indigo-700 underline dark:text-indigo-300">
            {children}
          </Link>
        );
      return (
        <a href={to} className="text-indigo-700 underline dark:text-indigo-300" {...(to.startsWith("#") ? {} : { rel: "noreferrer", target: "_blank" })}>
          {children}
        </a>
      );
    },
    pre: ({ children }) => <pre className="my-3 overflow-x-auto rounded bg-slate-100 p-3 text-xs dark:bg-slate-900">{children}</pre>,
    code: ({ children, className }) => (
      <code className={`${className ?? ""} rounded bg-slate-100 px-1 font-mono text-[0.85em] dark:bg-slate-900`}>{children}</code>
    ),
    table: ({ children }) => (
      <div className="my-4 overflow-x-auto">
        <table className="w-full border-collapse text-left text-sm">{children}</table>
      </div>
    ),
    th: ({ children }) => <th className="border-b border-slate-300 px-2 py-1 font-semibold dark:border-slate-700">{children}</th>,
    td: ({ children }) => <td className="border-b border-slate-200 px-2 py-1 align-top dark:border-slate-800">{children}</td>,
  };
  return (
    <article className="min-w-0 max-w-4xl text-sm text-slate-800 dark:text-slate-200" data-testid="doc-page">
      <Markdown remarkPlugins={[remarkGfm]} components={components}>
        {markdown}
      </Markdown>
    </article>
  );
}
