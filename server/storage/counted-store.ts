/**
 * Counts the requests Quiver's own code makes to the data root's store, by kind and outcome
 * (`quiver_store_requests_total`): the operations page's store panel and the alert on an unreachable store read it.
 * Each is a span of the request's trace where tracing is on.
 * The engine's own requests go through Lance's object store client and are not among them.
 */
import "server-only";
import { metrics } from "@/server/metrics";
import { traced } from "@/server/tracing";
import type { ObjectStore } from "./object-store";

type Kind = "read" | "write" | "list" | "delete";

const KIND_OF: Partial<Record<keyof ObjectStore, Kind>> = {
  get: "read",
  getIfMatch: "read",
  head: "read",
  exists: "read",
  put: "write",
  putIfAbsent: "write",
  list: "list",
  listInfo: "list",
  listDirectories: "list",
  listingStamp: "list",
  directoryStamp: "list",
  delete: "delete",
  deletePrefix: "delete",
  movePrefix: "delete",
};

/** The counters of each kind and outcome, bound once: a call then costs one increment, not a lookup of its labels. */
const counters = Object.fromEntries(
  (["read", "write", "list", "delete"] as const).map((kind) => [
    kind,
    { ok: metrics.storeRequests.labels({ kind, outcome: "ok" }), error: metrics.storeRequests.labels({ kind, outcome: "error" }) },
  ]),
) as Record<Kind, { ok: { inc(): void }; error: { inc(): void } }>;

/** The store, its calls counted; a call made inside another (a listing's pages) counts once, as the call it is part of. */
export function countedStore(store: ObjectStore): ObjectStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      const kind = KIND_OF[property as keyof ObjectStore];
      if (kind === undefined || typeof value !== "function") return value;
      const counter = counters[kind];
      const name = `store: ${String(property)}`;
      return (...args: unknown[]) => {
        const call = () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        const answer = traced(name, () => ({ "quiver.store.kind": kind, "quiver.store.key": String(args[0] ?? "") }), call);
        answer.then(
          () => counter.ok.inc(),
          () => counter.error.inc(),
        );
        return answer;
      };
    },
  });
}
