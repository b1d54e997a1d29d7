/**
 * Every link between the repository's documents leads somewhere: a relative link names a file that exists, and an
 * anchor (`#…`, alone or after a file) names a heading of that document, as GitHub makes their anchors.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { anchorMaker } from "@/lib/doc-pages";

const ROOT = path.resolve(__dirname, "..");

/** The Markdown documents: the root's and everything under docs/ and ops/. */
function documents(): string[] {
  const below = (dir: string): string[] =>
    existsSync(path.join(ROOT, dir))
      ? readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" })
          .filter((f) => f.endsWith(".md"))
          .map((f) => path.join(dir, f))
      : [];
  return [...readdirSync(ROOT).filter((f) => f.endsWith(".md")), ...below("docs"), ...below("ops")];
}

/** The anchors of a document's headings, outside its code. */
function anchorsOf(markdown: string): Set<string> {
  const anchor = anchorMaker();
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) anchors.add(anchor(heading[1].replace(/`/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")));
  }
  return anchors;
}

/** The links of a document outside its code: `[text](target)`, with where each is. */
function linksOf(markdown: string): Array<{ target: string; line: number }> {
  const links: Array<{ target: string; line: number }> = [];
  let fenced = false;
  markdown.split("\n").forEach((line, i) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) return;
    const prose = line.replace(/`[^`]*`/g, "");
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) links.push({ target: m[1], line: i + 1 });
  });
  return links;
}

describe("the documents' links", () => {
  it("name files that exist and headings that are there", () => {
    const broken: string[] = [];
    const docs = documents();
    expect(docs).toContain("README.md");
    for (const doc of docs) {
      const text = readFileSync(path.join(ROOT, doc), "utf8");
      for (const { target, line } of linksOf(text)) {
        if (/^[a-z]+:/i.test(target)) continue;
        const [file, anchor] = target.split("#") as [string, string | undefined];
        const linked = file ? path.join(path.dirname(doc), decodeURIComponent(file)) : doc;
        if (!existsSync(path.join(ROOT, linked))) {
          broken.push(`${doc}:${line}: ${target} (no file ${linked})`);
          continue;
        }
        if (anchor !== undefined && linked.endsWith(".md") && !anchorsOf(readFileSync(path.join(ROOT, linked), "utf8")).has(anchor)) {
          broken.push(`${doc}:${line}: ${target} (no heading of ${linked} has that anchor)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("make anchors as GitHub does", () => {
    const anchors = anchorsOf(
      "# Quiver\n## What each record of a write costs, and what it buys\n### The guarantees' cost, target by target\n## `npm start`\n## Quiver\n```\n# not a heading\n```\n",
    );
    expect([...anchors]).toEqual([
      "quiver",
      "what-each-record-of-a-write-costs-and-what-it-buys",
      "the-guarantees-cost-target-by-target",
      "npm-start",
      "quiver-1",
    ]);
  });
});
