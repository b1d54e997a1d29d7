/**
 * The README's first command on a checkout with no build yet: `npm start` builds, then starts a worker per core. What
 * a new operator reads must read as a success: no build warning, Next.js's banner once, and at the end where to sign
 * in and the first admin key, which works. The engine's own log lines come out as lines of the server's log.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { client, until } from "./client";
import { freePort } from "./oidc";
import { sourceCopy } from "./source-copy";
import { engineLogLine } from "../scripts/worker-output.mjs";

let child: ChildProcess | undefined;
/** The source copy and its root: a build and a node_modules of 1.7 GB, left behind they filled the disk after 60 runs. */
const made: string[] = [];
afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill("SIGTERM");
    await new Promise((resolve) => child!.once("exit", resolve));
  }
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe("the first `npm start`", () => {
  it("builds without a warning, shows one banner, and ends with where to sign in and a first key that works", async () => {
    const dir = path.join(os.tmpdir(), `quiver-first-start-${process.pid}`);
    const root = mkdtempSync(path.join(os.tmpdir(), "quiver-first-start-root-"));
    made.push(dir, root);
    await sourceCopy(dir);
    const port = await freePort();
    let output = "";
    const { QUIVER_ADMIN_API_KEY: _configured, ...env } = process.env;
    child = spawn(process.execPath, ["scripts/start.mjs", "-H", "127.0.0.1"], {
      cwd: dir,
      env: { ...env, PORT: String(port), QUIVER_ROOT: root, QUIVER_WORKERS: "2" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (d) => (output += d));
    child.stderr!.on("data", (d) => (output += d));
    await until(
      "the start's last line",
      async () => output,
      (text) => text.includes("only its hash is kept") || child!.exitCode !== null,
      240_000,
      500,
    );

    expect(output).toContain("quiver: building the server and console");
    expect(output).not.toContain("Ecmascript file had an error");
    expect(output).not.toContain("Edge Runtime");
    expect(output.match(/▲ Next\.js/g)).toHaveLength(1);
    const box = output.slice(output.lastIndexOf("┌"));
    expect(box).toContain(`Sign in at http://127.0.0.1:${port}/signin with this admin key`);
    const key = /qvr_[0-9a-f]{16}_[A-Za-z0-9_-]{43}/.exec(box)?.[0];
    expect(key, output).toBeDefined();
    expect(output.trimEnd().endsWith("└" + "─".repeat(box.indexOf("┐") - 1) + "┘")).toBe(true);
    expect((await client(`http://127.0.0.1:${port}`, { "x-api-key": key! }).get("/v1/whoami")).body).toMatchObject({ admin: true });
    expect((await fetch(`http://127.0.0.1:${port}/signin`)).status).toBe(200);
  }, 300_000);
});

describe("the engine's own log lines", () => {
  it("become lines of the server's log, at their level", () => {
    const line = "[2026-11-26T20:07:16Z WARN  lance::dataset::scanner] This search did not include `_distance`.";
    process.env.QUIVER_LOG_FORMAT = "json";
    expect(JSON.parse(engineLogLine(42, line)!)).toEqual({
      level: 40,
      time: "2026-11-26T20:07:16.000Z",
      pid: 42,
      source: "engine",
      target: "lance::dataset::scanner",
      msg: "This search did not include `_distance`.",
    });
    expect(engineLogLine(42, line.replace("WARN ", "DEBUG"))).toBe("");
    expect(engineLogLine(42, "an ordinary line")).toBeNull();
    delete process.env.QUIVER_LOG_FORMAT;
  });
});
