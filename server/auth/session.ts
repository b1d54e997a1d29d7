/** The secret that signs console sessions: NEXTAUTH_SECRET, or one generated once and kept under the data root. */
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { config } from "../config";

let secret: Promise<string> | undefined;

export function sessionSecret(): Promise<string> {
  secret ??= (async () => {
    if (process.env.NEXTAUTH_SECRET) return process.env.NEXTAUTH_SECRET;
    const file = path.join(config.root, ".quiver", "auth", "session-secret");
    await fs.mkdir(path.dirname(file), { recursive: true });
    try {
      await fs.writeFile(file, randomBytes(32).toString("base64url"), { flag: "wx", mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    return (await fs.readFile(file, "utf8")).trim();
  })();
  return secret;
}
