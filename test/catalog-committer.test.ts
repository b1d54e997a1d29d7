/**
 * One committer of the catalog's table rows for all instances of a root: the instance that holds its lease commits
 * the rows the others hand to it, in its group commits. Killed right after committing a handed row and before
 * answering, the instance that handed it answers the declare as made, once; the lease then passes to another.
 */
import { afterAll, describe, expect, it } from "vitest";
import { client, until as waitFor } from "./client";
import { startServer, storeOf, type TestServer } from "./server";

const servers: TestServer[] = [];

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

/** Waits for `what`, looking every 100 ms, for 30,000 ms unless told otherwise. */
const until = <T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, ms = 30_000) => waitFor(what, probe, done, ms, 100);

/** An instance's counts of catalog rows by route, and whether it holds the committer's lease. */
async function committerMetrics(server: TestServer) {
  const text = await fetch(`${server.url}/metrics`, { headers: server.auth }).then(
    (r) => r.text(),
    () => "",
  );
  const rows = (route: string) => Number(new RegExp(`^quiver_catalog_rows_total\\{route="${route}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
  return {
    committer: /^quiver_catalog_committer 1$/m.test(text),
    committed: rows("committed"),
    handed: rows("handed"),
    received: rows("received"),
    fallback: rows("fallback"),
    followedThroughCommitter: Number(/^quiver_cache_lookups_total\{cache="catalog_committer_changes",result="hit"\} (\d+)$/m.exec(text)?.[1] ?? 0),
  };
}

const declare = (server: TestServer, name: string) => client(server.url, server.auth).post<{ location?: string }>(`/v1/table/n$${name}/declare`, {});

const listed = async (server: TestServer) => {
  const reply = await client(server.url, server.auth).get<{ tables: string[] }>("/v1/namespace/n/table/list?limit=1000");
  return reply.body.tables;
};

describe("the catalog's committer", () => {
  it("commits the table rows of every instance; killed after a commit it could not answer, the row is its asker's, once", async () => {
    // Slots of two seconds: with one, a survivor renewing through a store slowed by the whole suite's blobs lost the
    // lease to the new instance, which then had no one to hand its rows to (CI, 2026-11-27).
    const env = { QUIVER_CATALOG_LEASE_MS: "2000" };
    const first = await startServer({ ...env, QUIVER_FAILPOINTS: "kill-after-catalog-commit:n$doomed" });
    servers.push(first);
    const second = await startServer(env, { root: first.root });
    servers.push(second);
    expect((await client(first.url, first.auth).post("/v1/namespace/n/create", {})).status).toBe(200);

    // The first instance to have a row to commit takes the lease; the other learns who holds it.
    expect((await declare(first, "warm0")).status).toBe(200);
    await until(
      "the first instance committing",
      () => committerMetrics(first),
      (m) => m.committer,
    );
    for (let i = 1; ; i++) {
      expect((await declare(second, `warm${i}`)).status).toBe(200);
      if ((await committerMetrics(second)).handed > 0) break;
      expect(i).toBeLessThan(50);
    }

    const before = await Promise.all([committerMetrics(first), committerMetrics(second)]);
    const names = Array.from({ length: 20 }, (_, i) => `t${i}`);
    await Promise.all(
      names.map(async (name, i) => {
        const server = i % 2 ? second : first;
        expect((await declare(server, name)).status).toBe(200);
        // Made through the committer, the table is there at once for the instance that asked.
        expect((await client(server.url, server.auth).post(`/v1/table/n$${name}/describe`, {})).status).toBe(200);
      }),
    );
    const after = await Promise.all([committerMetrics(first), committerMetrics(second)]);
    // The second instance committed no row of its own: it handed its ten to the first, which committed them.
    expect(after[1].committed).toBe(before[1].committed);
    expect(after[1].handed - before[1].handed).toBe(10);
    expect(after[0].received - before[0].received).toBe(10);
    expect(after[0].committed - before[0].committed).toBe(20);
    for (const server of [first, second]) expect((await listed(server)).filter((t) => names.includes(t)).sort()).toEqual([...names].sort());
    // The second instance followed the committer's commits by asking it for their rows, not by reading the store.
    expect(after[1].followedThroughCommitter).toBeGreaterThan(before[1].followedThroughCommitter);

    // The committer dies right after committing a row handed to it, before it answers: the instance that asked
    // answers the declare as made, and its row is in the catalog once, at the location it claimed.
    const doomed = await declare(second, "doomed");
    expect(doomed.status).toBe(200);
    expect((await committerMetrics(second)).fallback).toBeGreaterThan(after[1].fallback);
    const described = await client(second.url, second.auth).post<{ location: string }>("/v1/table/n$doomed/describe", {});
    expect(described.status).toBe(200);
    expect(described.body.location).toBe(doomed.body.location);
    expect((await listed(second)).filter((t) => t === "doomed")).toEqual(["doomed"]);
    const again = await declare(second, "doomed");
    expect(again.status).toBe(409);

    // Its lease runs out (two slots); the next row to commit has the survivor take it over.
    await until(
      "the survivor committing",
      async () => (await declare(second, `after${Date.now()}`), committerMetrics(second)),
      (m) => m.committer,
    );
    const third = await startServer(env, { root: first.root });
    servers.push(third);
    const handed = await until(
      "a new instance handing its rows to the survivor",
      async () => (await declare(third, `late${Date.now()}`), committerMetrics(third)),
      (m) => m.handed > 0,
    );
    expect(handed.handed).toBeGreaterThan(0);
  });

  it("is one worker of `npm start`, to which the other workers hand their rows, each reaching it alone", async () => {
    const server = await startServer({}, { workers: 2 });
    servers.push(server);
    expect((await client(server.url, server.auth).post("/v1/namespace/n/create", {})).status).toBe(200);
    // Both workers take declares (the primary hands connections round the workers); the first to commit holds the lease.
    const names = Array.from({ length: 40 }, (_, i) => `w${i}`);
    for (let round = 0; round < 4; round++) {
      await Promise.all(names.slice(round * 10, round * 10 + 10).map(async (name) => expect((await declare(server, name)).status).toBe(200)));
    }
    // Summed over the workers: rows were handed from one to the other, and none had to be committed after a hand-off
    // failed (a call reaching the wrong worker is refused for its token).
    const summed = await committerMetrics(server);
    expect(summed.handed).toBeGreaterThan(0);
    expect(summed.received).toBe(summed.handed);
    expect(summed.fallback).toBe(0);
    expect((await listed(server)).filter((t) => t.startsWith("w")).sort()).toEqual([...names].sort());

    // The address the lease gives reaches the holder and no other worker, on every new connection.
    const store = storeOf(server);
    const slots = await store.list(".quiver/catalog/committer/lease/");
    const holder = JSON.parse((await store.get(slots.sort().at(-1)!))!.toString("utf8")) as { url: string; token: string };
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        fetch(`${holder.url}/peer/catalog-rows`, {
          method: "POST",
          headers: { authorization: `Bearer ${holder.token}`, connection: "close", "content-type": "application/json" },
          body: JSON.stringify({ catalog: "no such catalog", rows: [], seen: 0 }),
        }).then((r) => r.status),
      ),
    );
    // Declined (409: not a catalog it commits), never refused for a token another process made (401).
    expect(answers).toEqual(answers.map(() => 409));
  });
});
