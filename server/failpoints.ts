/**
 * Crash points for tests of the worst moments, which no proxy can reach on a local root. `QUIVER_FAILPOINTS` lists
 * `<point>:<target>` entries, each firing every time its point is reached for its target, or `<point>:<target>@<n>`,
 * firing only the n-th time. A kill point kills the process (SIGKILL, as a crash would): `kill-after-commit:<table>`
 * the moment a commit to that table has returned from the engine, before anything records it or answers;
 * `kill-after-claim:<table>` the moment a write's claim in the write ledger is in the store, before its commit
 * begins; `kill-after-catalog-commit:<object id>` the moment the catalog's commit of that table's row returned;
 * `kill-after-batch:<first table>` the moment a batch's versions appeared together, before anything records it or
 * answers (its staged manifests still there). A hold
 * point stops the request that reaches it for good, as if its instance had stopped there while the others went on:
 * `hold-before-answer:<table>` holds a write that has committed before anything records it or answers;
 * `hold-after-claim:<table>` a write whose claim is in the write ledger before its commit begins (its lease renewed). A failure
 * point makes a step fail as a broken store would: `fail-maintenance:<table>` each maintenance job of that table. A
 * pause point stops the whole process (SIGSTOP, as a paused VM or a throttled container would be) until something
 * sends it SIGCONT: `pause-after-claim:<table>` once a write's claim is in the ledger, before its commit begins;
 * `pause-before-publish:<table>` in the middle of a commit, once the engine staged its manifest and before Quiver's
 * guard looks at the versions and publishes it; `pause-in-batch:<table>` in a batch, once it is claimed and before it
 * applies that table's operation (the operations before it applied, their versions still held from readers);
 * `pause-after-version-list:<table>` in ListTableVersions, once the versions are listed and before their manifests
 * are read.
 * Unset, as in any deployment, a point costs one look at an empty map.
 */
import "server-only";

/** Each point and target set, with the hit it fires at (0: every hit) and the hits so far. */
const points = new Map<string, { at: number; hits: number }>(
  (process.env.QUIVER_FAILPOINTS ?? "")
    .split(",")
    .filter(Boolean)
    .map((entry) => {
      const [point, at] = entry.split("@");
      return [point, { at: at === undefined ? 0 : Number(at), hits: 0 }];
    }),
);

function fires(name: string, target: string): boolean {
  const point = points.size ? points.get(`${name}:${target}`) : undefined;
  if (!point) return false;
  point.hits++;
  return point.at === 0 || point.hits === point.at;
}

/** Dies here when the point `name:target` fires. */
export function failpoint(name: string, target: string) {
  if (fires(name, target)) process.kill(process.pid, "SIGKILL");
}

/** Never settles when the point `name:target` fires: the request waits here until its process is killed. */
export function holdpoint(name: string, target: string): Promise<void> {
  return fires(name, target) ? new Promise<void>(() => {}) : Promise.resolve();
}

/** Stops the process here (until it is sent SIGCONT) when the point `name:target` fires. */
export function pausepoint(name: string, target: string) {
  if (fires(name, target)) process.kill(process.pid, "SIGSTOP");
}

/** Throws `failure()` when the point `name:target` fires. */
export function failurepoint(name: string, target: string, failure: () => Error): void {
  if (fires(name, target)) throw failure();
}
