/**
 * A copy of this repository's source beside the system's temporary files, built as a user's checkout is: from a
 * commit of its history, or from the working tree as it is. Its dependencies are this checkout's, linked file by file
 * (the same packages; Next builds nothing that lies below a node_modules directory, so the copy cannot live in this
 * one's).
 */
import { execSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync } from "node:fs";

export function sourceCopy(dir: string, commit?: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(`${dir}/node_modules`, { recursive: true });
  // The working tree's files that git tracks or would (new files included, ignored ones not, deleted ones skipped).
  const files = "git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -c 2>/dev/null";
  execSync(`${commit ? `git archive ${commit}` : files} | tar -x -C "${dir}"`);
  for (const entry of readdirSync("node_modules")) {
    if (entry !== ".cache") execSync(`cp -al "node_modules/${entry}" "${dir}/node_modules/"`);
  }
}
