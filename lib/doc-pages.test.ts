import { describe, expect, it } from "vitest";
import { DOC_PAGES, docHref } from "./doc-pages";

const page = (slug: string) => DOC_PAGES.find((p) => p.slug === slug)!;

describe("the documentation's links in the console", () => {
  it("lead to the console's page of the file they name, with the anchor, or stay text for other files", () => {
    expect(docHref(page("readme"), "docs/authentication.md#authentication")).toBe("/docs/authentication#authentication");
    expect(docHref(page("benchmarks"), "#on-a-local-root")).toBe("#on-a-local-root");
    expect(docHref(page("benchmarks"), "clients.md#managed-versioning")).toBe("/docs/clients#managed-versioning");
    expect(docHref(page("contributing"), "../ARCHITECTURE.md")).toBe("/docs/architecture");
    expect(docHref(page("readme"), "ARCHITECTURE.md")).toBe("/docs/architecture");
    expect(docHref(page("operations"), "../ops/grafana/quiver-dashboard.json")).toBeNull();
    expect(docHref(page("readme"), "../../etc/passwd")).toBeNull();
    expect(docHref(page("readme"), "https://lancedb.github.io/lance/")).toBe("https://lancedb.github.io/lance/");
  });
});
