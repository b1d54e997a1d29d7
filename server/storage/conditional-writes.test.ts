/**
 * What each store does with each condition, measured through what Quiver sends it with (OpenDAL for the object
 * stores, the local store of our own for a directory), against the table in docs/object-storage.md: a store that
 * does otherwise (an upgrade that starts honouring a condition, a store that stops) fails here until the table says so.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Operator } from "opendal";
import { describe, expect, it } from "vitest";
import { sharedStoreServer, STORE_NAMES, type StoreServerKind } from "@/test/store-server";
import { openDalConfig } from "./cloud-store";
import { LocalStore } from "./local-store";
import { parseRoot, type ObjectRoot } from "./root";

type Outcome = "yes" | "ignored" | "refused" | "—";
const CONDITIONS = ["create-only", "write if-match", "if-none-match *", "read if-match", "delete if-match"] as const;
type Condition = (typeof CONDITIONS)[number];

/** The table's rows, by the store's name in its first cell. */
function documented(): Map<string, Record<Condition, string>> {
  const doc = readFileSync(path.join(__dirname, "../../docs/object-storage.md"), "utf8");
  const section = doc.slice(doc.indexOf("### Conditional writes on each store"));
  const table = section.slice(section.indexOf("| Store"), section.indexOf("\n\n", section.indexOf("| Store")));
  const rows = table.split("\n").filter((line) => line.startsWith("| ") && !line.startsWith("| Store"));
  return new Map(
    rows.map((line) => {
      const [store, ...cells] = line
        .split("|")
        .slice(1, -1)
        .map((cell) => cell.trim());
      return [store, Object.fromEntries(CONDITIONS.map((c, i) => [c, cells[i]])) as Record<Condition, string>];
    }),
  );
}

const WRONG_ETAG = '"00000000000000000000000000000000"';
const kindOf = (err: unknown) => (err instanceof Error ? (/^(\w+)/.exec(err.message)?.[1] ?? "") : "");

/** What the store did with a request whose condition failed, told by whether the object is as it was. */
async function outcome(attempt: () => Promise<unknown>, unchanged: () => Promise<boolean>): Promise<Outcome> {
  try {
    await attempt();
  } catch (err) {
    if (kindOf(err) === "Unsupported") return "refused";
    if (kindOf(err) !== "ConditionNotMatch") throw err;
    return (await unchanged()) ? "yes" : "ignored";
  }
  return "ignored";
}

/** Each condition tried through OpenDAL on an object store, the condition failing each time. */
async function probeObjectStore(kind: StoreServerKind): Promise<Record<Condition, Outcome>> {
  const server = await sharedStoreServer(kind);
  const { service, config } = openDalConfig(parseRoot((await server.newRoot()).uri) as ObjectRoot, server.storageOptions);
  const op = new Operator(service, config);
  const key = "probe";
  await op.write(key, "first");
  const holds = async (content: string) => (await op.exists(key)) && (await op.read(key)).toString() === content;
  const found: Partial<Record<Condition, Outcome>> = {};
  found["create-only"] = await outcome(
    () => op.write(key, "second", { ifNotExists: true }),
    () => holds("first"),
  );
  found["write if-match"] = await outcome(
    () => op.write(key, "third", { ifMatch: WRONG_ETAG }),
    () => holds("first"),
  );
  await op.write(key, "first");
  found["if-none-match *"] = await outcome(
    () => op.write(key, "fourth", { ifNoneMatch: "*" }),
    () => holds("first"),
  );
  await op.write(key, "first");
  let read: Outcome;
  try {
    await op.read(key, { ifMatch: WRONG_ETAG });
    read = "ignored";
  } catch (err) {
    read = kindOf(err) === "ConditionNotMatch" ? "yes" : kindOf(err) === "Unsupported" ? "refused" : "ignored";
  }
  found["read if-match"] = read;
  // OpenDAL 0.49's delete takes no options in its typings: what it does with one given is what is measured.
  const deleteWith = op.delete.bind(op) as (path: string, options: { ifMatch: string }) => Promise<void>;
  found["delete if-match"] = await outcome(
    () => deleteWith(key, { ifMatch: WRONG_ETAG }),
    () => holds("first"),
  );
  return found as Record<Condition, Outcome>;
}

describe("conditional writes on each store, as docs/object-storage.md says", () => {
  const table = documented();

  it("has a row for every store the tests run", () => {
    expect([...table.keys()]).toEqual(["a local directory", STORE_NAMES.azurite, STORE_NAMES.s3, "GCS"]);
  });

  it("a local directory: written only where none exists, read only while unchanged", async () => {
    const store = new LocalStore({ kind: "local", uri: mkdtempSync(path.join(os.tmpdir(), "quiver-conditions-")) });
    const row = table.get("a local directory")!;
    const first = await store.putIfAbsent("probe", "first");
    expect(first).not.toBeNull();
    const again = await store.putIfAbsent("probe", "second");
    expect(again === null && (await store.get("probe"))?.toString() === "first" ? "yes" : "ignored").toBe(row["create-only"]);
    expect((await store.getIfMatch("probe", WRONG_ETAG)) === "changed" ? "yes" : "ignored").toBe(row["read if-match"]);
    expect((await store.getIfMatch("probe", first!.etag))?.toString()).toBe("first");
    for (const condition of ["write if-match", "if-none-match *", "delete if-match"] as const) expect(row[condition]).toBe("—");
  });

  it.each(["azurite", "s3"] as const)("%s", async (kind) => {
    expect(await probeObjectStore(kind)).toEqual(table.get(STORE_NAMES[kind]));
  });
});
