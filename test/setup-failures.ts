/**
 * A test that fails shows what each of its file's running servers logged: the tail of the log in the test's output,
 * and the errors they logged beside its failure, in the run's summary (CI keeps only the end of what it printed). A 500
 * or a stall in CI is then read from the run's own output, not guessed at.
 */
import { beforeEach } from "vitest";
import { runningServers } from "./running-servers";

const TAIL_CHARS = 8000;
const ERRORS_CHARS = 6000;

/** The lines of a log that are not a request or a notice: errors, warnings past a request's, and anything not JSON (a crash's stack). */
function troubleIn(log: string): string {
  const lines = log.split("\n").filter((line) => {
    if (!line.startsWith("{")) return line.trim() !== "" && !/^(▲|-|✓) /.test(line.trim());
    try {
      const entry = JSON.parse(line) as { level?: number; status?: number };
      return (entry.level ?? 0) >= 50 || (entry.status ?? 0) >= 500;
    } catch {
      return true;
    }
  });
  return lines.join("\n").slice(-ERRORS_CHARS);
}

beforeEach(({ onTestFailed }) =>
  onTestFailed(({ task }) => {
    for (const server of runningServers) {
      const name = `the server on ${server.url} (pid ${server.pid})`;
      console.log(`log of ${name}, its end:\n${server.output().slice(-TAIL_CHARS)}`);
      const trouble = troubleIn(server.output());
      if (trouble) task.result?.errors?.push({ name: "ServerLog", message: `${name} logged:\n${trouble}` });
    }
  }),
);
