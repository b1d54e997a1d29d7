/** The secret that signs console sessions: NEXTAUTH_SECRET, or one generated once and kept under the data root. */
import "server-only";
import { randomBytes } from "node:crypto";
import { rootStore } from "../storage/stores";

const SECRET_KEY = ".quiver/auth/session-secret";

let secret: Promise<string> | undefined;

export function sessionSecret(): Promise<string> {
  secret ??= (async () => {
    if (process.env.NEXTAUTH_SECRET) return process.env.NEXTAUTH_SECRET;
    const store = rootStore();
    // Of instances starting together, the first write wins and all of them read the winner's secret.
    await store.putIfAbsent(SECRET_KEY, randomBytes(32).toString("base64url"));
    const stored = await store.get(SECRET_KEY);
    if (!stored) throw new Error("the session secret vanished from the data root");
    return stored.toString("utf8").trim();
  })();
  secret.catch(() => (secret = undefined));
  return secret;
}
