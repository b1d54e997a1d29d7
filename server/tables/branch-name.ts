/** How the server names a branch and a version of one. */
import "server-only";

/** The branch a request names, as the server keeps it (a claim's shape, a commit's record): null for main, named or not. */
export const namedBranch = (branch?: string | null): string | null => (branch && branch !== "main" ? branch : null);

/** Which version a commit made, as its audit entry and record say it: "version 7 of main", "version 3 of branch 'dev'". */
export const versionAt = (version: number, branch?: string) => {
  const named = namedBranch(branch);
  return `version ${version} of ${named === null ? "main" : `branch '${named}'`}`;
};
