/**
 * What the exactly-once soak keeps when a batch is stored twice or an acknowledged one is missing, so that a failure
 * seen once (in CI, say) can be explained from what it left rather than guessed at. For each such batch: the
 * requests that carried it (from the load balancer: when, under which id, to which instance, answered how), what the
 * write ledger holds of each (its claims with the commit they describe, answers, decisions and why), and the versions
 * that hold its rows, with each version's time and the requests its manifest names (the transaction property in
 * which a guarded commit names the requests it applied), with their claims. The whole of it (every ledger record, the
 * balancer's log, each instance's output) goes into a directory the summary names.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ObjectStore } from "@/server/storage/object-store";
import { listVersionNumbers, manifestKey, versionSummary } from "@/server/lance/version-manifest";
import type { client as makeClient } from "../client";
import type { Passed } from "../load-balancer";

type Api = ReturnType<typeof makeClient>;

interface Record_ {
  key: string;
  body: unknown;
}

interface Claim {
  attempt: string;
  /** The request's key, as a version that applied it names it (absent from claims of earlier releases: the path says it). */
  key?: string;
  n: number;
  requestId?: string;
  instance: string;
  time: string;
  shape: { after: number; commit: string; undecidable?: string };
}

export interface SoakEvidence {
  /** Batches stored more than once, and acknowledged batches not stored at all. */
  doubled: number[];
  missing: number[];
  rowsPerBatch: number;
  table: string;
  /** The requests that carried a batch. */
  requestsOf: (batch: number) => Passed[];
  passed: Passed[];
  store: ObjectStore;
  /** A live instance's API, to read the table at each version. */
  api: Api;
  /** Each instance's output, the killed ones' included, by a name that says which instance and which start. */
  outputs: Array<{ name: string; output: string }>;
}

const readAll = async (store: ObjectStore, prefix: string): Promise<Record_[]> => {
  const keys = await store.list(prefix);
  return Promise.all(
    keys.map(async (key) => {
      const raw = await store.get(key);
      let body: unknown = raw?.toString("utf8") ?? null;
      try {
        body = raw && raw.length ? JSON.parse(raw.toString("utf8")) : body;
      } catch {
        // kept as text
      }
      return { key, body };
    }),
  );
};

/** The first version from `low` on at which the batch's rows are there `rows` times over, or null. */
async function firstVersionWith(api: Api, table: string, predicate: string, rows: number, low: number, latest: number): Promise<number | null> {
  let high = latest;
  const count = async (version: number) => Number((await api.post(`/v1/table/${table}/count_rows`, { version, predicate })).body);
  if ((await count(latest)) < rows) return null;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if ((await count(middle)) >= rows) high = middle;
    else low = middle + 1;
  }
  return low;
}

export async function writeSoakEvidence(evidence: SoakEvidence): Promise<string> {
  const { store, api, table, rowsPerBatch, passed } = evidence;
  const dir = path.join(os.tmpdir(), `quiver-soak-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  mkdirSync(dir, { recursive: true });
  const requests = await readAll(store, ".quiver/requests/");
  writeFileSync(path.join(dir, "ledger.json"), JSON.stringify(requests, null, 1));
  writeFileSync(path.join(dir, "load-balancer.json"), JSON.stringify(passed, null, 1));
  for (const { name, output } of evidence.outputs) writeFileSync(path.join(dir, `${name}.log`), output);

  const start = passed[0]?.at ?? 0;
  const recordsOf = (key: string) => requests.filter((r) => r.key.startsWith(`.quiver/requests/${key}/`));
  const claims = requests
    .filter((r) => /\/\d+\.claim$/.test(r.key) && !r.key.includes("/same-body/"))
    .map((r) => ({ key: r.key.split("/")[2], claim: r.body as Claim }));
  // The soak's table is a root-level one: its directory is its name with `.lance`.
  const directory = `${table}.lance`;
  const { v2 } = await listVersionNumbers(store, directory);
  const namedBy = (version: number) =>
    versionSummary(store, { key: manifestKey(directory, version, v2), eTag: "" }).then(
      (summary) => summary.requests,
      (err: Error) => [`(its manifest could not be read: ${err.message})`],
    );
  const latest = Number(((await api.post(`/v1/table/${table}/version/describe`, {})).body as { version?: { version?: number } }).version?.version ?? 0);

  const explain = async (batch: number, why: string): Promise<string[]> => {
    const lines = [`batch ${batch} (${why}):`];
    for (const r of evidence.requestsOf(batch)) {
      lines.push(`  request ${r.requestId} at +${r.at - start} ms to instance ${r.upstream}: ${r.status ?? "no answer"}`);
      for (const { key, claim } of claims.filter((c) => c.claim.requestId === r.requestId)) {
        lines.push(
          `    claim ${key}/${claim.n} by ${claim.instance.slice(0, 8)} at ${claim.time}: after ${claim.shape.after}, commit ${claim.shape.commit.slice(0, 8)}` +
            `${claim.shape.undecidable ? ` (${claim.shape.undecidable})` : ""}`,
        );
        for (const record of recordsOf(key).filter((x) => /\.(answer|decision)$/.test(x.key)))
          lines.push(`      ${record.key.split("/").pop()}: ${JSON.stringify(record.body).slice(0, 400)}`);
      }
    }
    const predicate = `id >= ${batch * rowsPerBatch} AND id < ${(batch + 1) * rowsPerBatch}`;
    let from = 1;
    for (let copies = 1; copies <= 3; copies++) {
      const version = await firstVersionWith(api, table, predicate, copies * rowsPerBatch, from, latest);
      if (version === null) break;
      from = version;
      const described = (await api.post(`/v1/table/${table}/version/describe`, { version })).body as { version?: { timestamp?: string } };
      const named = await namedBy(version);
      const naming = claims.filter((c) => named.includes(c.claim.key ?? c.key));
      lines.push(
        `  copy ${copies} in version ${version} made ${described.version?.timestamp ?? "?"}: it names ${named.length ? named.join(", ") : "no request"}` +
          `${naming.length ? `; claimed as ${naming.map((c) => `${c.claim.requestId} (${c.key})`).join(", ")}` : ""}`,
      );
    }
    return lines;
  };
  const explained = await Promise.all([
    ...evidence.doubled.slice(0, 3).map((batch) => explain(batch, "stored twice")),
    ...evidence.missing.slice(0, 3).map((batch) => explain(batch, "acknowledged, not there")),
  ]);
  const lines = [`evidence in ${dir}`, ...explained.flat()];
  const summary = lines.join("\n");
  writeFileSync(path.join(dir, "summary.txt"), summary);
  return summary;
}
