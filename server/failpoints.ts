/**
 * Crash points for tests of the worst moments, which no proxy can reach on a local root: with
 * `QUIVER_FAILPOINTS=kill-after-commit:<table>` the process kills itself (SIGKILL, as a crash would) the moment a
 * commit to that table has returned from the engine, before anything records it or answers; with
 * `kill-after-catalog-commit:<object id>`, the moment the catalog's commit of that table's row returned. Unset, as in any
 * deployment, a point costs one lookup in an empty set.
 */
import "server-only";

const points = new Set((process.env.QUIVER_FAILPOINTS ?? "").split(",").filter(Boolean));

/** Dies here when the point `name:target` is set. */
export function failpoint(name: string, target: string) {
  if (points.size && points.has(`${name}:${target}`)) process.kill(process.pid, "SIGKILL");
}
