/**
 * The Grafana dashboard and the Prometheus alert rules in ops/ name only what the server exports: every metric they
 * query is in a real server's GET /metrics, and every label they select or group by is one that metric has.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { register } from "prom-client";
import { metrics } from "@/server/metrics";
import { sharedStoreServer } from "./store-server";
import { client, rows } from "./client";
import { startServer, type TestServer } from "./server";

const OPS = path.resolve(__dirname, "../ops");
/** Labels Prometheus itself gives every series it scrapes, and the bucket bound of a histogram. */
const SCRAPE_LABELS = new Set(["instance", "job"]);

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string; description: string };
}

const rules = (
  parseYaml(readFileSync(path.join(OPS, "prometheus/quiver-alerts.yml"), "utf8")) as { groups: Array<{ name: string; rules: Rule[] }> }
).groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(readFileSync(path.join(OPS, "grafana/quiver-dashboard.json"), "utf8")) as {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
  templating: { list: Array<{ definition?: string }> };
};
const queries: Array<{ where: string; expr: string }> = [
  ...rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })),
  ...dashboard.panels.flatMap((p) => p.targets.map((t) => ({ where: `panel '${p.title}'`, expr: t.expr }))),
  ...dashboard.templating.list.filter((v) => v.definition).map((v) => ({ where: "a dashboard variable", expr: v.definition! })),
];

/** The metric families of a Prometheus text exposition, by name, with their type. */
function families(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
}

/** The family a series name belongs to: a histogram's `_bucket`, `_sum` and `_count` are its own. */
function familyOf(name: string, exported: Map<string, string>): string | undefined {
  if (exported.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, "");
  return exported.get(base) === "histogram" || exported.get(base) === "summary" ? base : undefined;
}

/** The label names a query selects on (`{name=...}`) or groups by (`by (a, b)`). */
function labelsIn(expr: string): string[] {
  const selected = [...expr.matchAll(/\{([^}]*)\}/g)].flatMap((m) => [...m[1].matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]));
  const grouped = [...expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)].flatMap((m) => m[1].split(",").map((l) => l.trim()));
  return [...selected, ...grouped].filter(Boolean);
}

let server: TestServer;
let exported: Map<string, string>;

beforeAll(async () => {
  // On an object-store root, with its read cache: the server then exports every metric it has.
  const azurite = await sharedStoreServer("azurite");
  const root = await azurite.newRoot();
  server = await startServer({ ...root.env, QUIVER_READ_CACHE_DIR: mkdtempSync(path.join(os.tmpdir(), "quiver-dashboards-")) }, { root: root.uri });
  const api = client(server.url, server.auth);
  expect((await api.arrow("/v1/table/seen/create", rows(0, 10))).status).toBe(200);
  const scraped = await fetch(`${server.url}/metrics`, { headers: server.auth });
  expect(scraped.status).toBe(200);
  exported = families(await scraped.text());
});
afterAll(() => server?.stop());

describe("the dashboard and alert rules in ops/", () => {
  it("are read whole: every alert says how bad and what to do, every panel queries something", () => {
    expect(rules.length).toBeGreaterThanOrEqual(6);
    for (const rule of rules) {
      expect(["critical", "warning", "info"], rule.alert).toContain(rule.labels.severity);
      expect(rule.annotations.summary.length, rule.alert).toBeGreaterThan(10);
      expect(rule.annotations.description.length, rule.alert).toBeGreaterThan(20);
    }
    expect(rules.map((r) => r.alert)).toEqual(
      expect.arrayContaining(["QuiverStoreUnreachable", "QuiverHighErrorRate", "QuiverRequestsRefused", "QuiverNoMaintainer", "QuiverMaintenanceFailing"]),
    );
    for (const panel of dashboard.panels) expect(panel.targets.length, panel.title).toBeGreaterThan(0);
  });

  it("query only metrics the server exports", () => {
    const unknown = queries.flatMap(({ where, expr }) =>
      [...expr.matchAll(/\bquiver_[a-z0-9_]+/g)]
        .map((m) => m[0])
        .filter((name) => !familyOf(name, exported))
        .map((name) => `${where}: ${name}`),
    );
    expect(unknown).toEqual([]);
    // Every metric of the server's own is shown or alerted on somewhere, apart from the process's defaults.
    const named = new Set(queries.flatMap(({ expr }) => [...expr.matchAll(/\bquiver_[a-z0-9_]+/g)].map((m) => familyOf(m[0], exported))));
    const own = [...exported.keys()].filter((name) => !/^quiver_(process|nodejs)_/.test(name));
    expect(own.length).toBeGreaterThan(Object.keys(metrics).length);
    expect(own.filter((name) => !named.has(name))).toEqual([]);
  });

  it("select and group by labels their metrics have", () => {
    const labelsOf = new Map(register.getMetricsAsArray().map((m) => [m.name, new Set((m as unknown as { labelNames: string[] }).labelNames)]));
    const wrong = queries.flatMap(({ where, expr }) => {
      const names = [...expr.matchAll(/\bquiver_[a-z0-9_]+/g)].map((m) => familyOf(m[0], exported)!);
      const known = new Set([...SCRAPE_LABELS, ...names.flatMap((n) => [...(labelsOf.get(n) ?? []), ...(exported.get(n) === "histogram" ? ["le"] : [])])]);
      return labelsIn(expr)
        .filter((label) => !known.has(label))
        .map((label) => `${where}: ${label}`);
    });
    expect(wrong).toEqual([]);
  });
});
