/**
 * A copy of this repository's source beside the system's temporary files, built as a user's checkout is: from a
 * commit of its history, or from the working tree as it is. Its dependencies are this checkout's, linked file by file
 * (the same packages; Next builds nothing that lies below a node_modules directory, so the copy cannot live in this
 * one's). Made without blocking: a test worker whose event loop stops for a minute loses its line to vitest
 * ("Timeout calling onTaskUpdate"), which fails the run though every test passed.
 */
import { exec } from "node:child_process";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { promisify } from "node:util";

export const run = promisify(exec);

export async function sourceCopy(dir: string, commit?: string): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(`${dir}/node_modules`, { recursive: true });
  // The working tree's files that git tracks or would (new files included, ignored ones not, deleted ones skipped).
  const files = "git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -c 2>/dev/null";
  await run(`${commit ? `git archive ${commit}` : files} | tar -x -C "${dir}"`);
  const entries = readdirSync("node_modules").filter((entry) => entry !== ".cache");
  await run(`cp -al ${entries.map((entry) => `"node_modules/${entry}"`).join(" ")} "${dir}/node_modules/"`);
}
