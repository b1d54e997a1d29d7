// Starts the production server on PORT (default 3000), building first when there is no build yet.
import { existsSync } from "node:fs";
import { spawnSync, spawn } from "node:child_process";

const next = "node_modules/.bin/next";
if (!existsSync(".next/BUILD_ID")) {
  const build = spawnSync(next, ["build"], { stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
const port = process.env.PORT || "3000";
process.env.NEXTAUTH_URL ||= `http://localhost:${port}`;
const server = spawn(next, ["start", "-p", port, ...process.argv.slice(2)], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => process.exit(code ?? 0));
