/** The branch a request names, as the server keeps it (a claim's shape, a commit's record): null for main, named or not. */
import "server-only";

export const namedBranch = (branch?: string | null): string | null => (branch && branch !== "main" ? branch : null);
