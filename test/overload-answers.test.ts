/**
 * A body refused while it arrives still gets its answer. One request holds the whole body budget (its declared
 * length is reserved and it never finishes), so every other Arrow body is refused with 503 "Slow down" before it is
 * read. Real clients that send such bodies (Node's fetch, curl, the LanceDB remote client) read that 503 with
 * Retry-After, never a broken pipe or a reset; and the server keeps reading a refused body for as long as it
 * arrives within the bounds, however long the client pauses, so the connection then serves the next request.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as lancedb from "@lancedb/lancedb";
import { Agent } from "undici";
import { client, expectError, rows, type Reply } from "./client";
import { startServer, type TestServer } from "./server";
import { ErrorCode } from "@/lib/contract/errors";

const arrowCjs = createRequire(import.meta.url)("apache-arrow") as typeof import("apache-arrow");
const MiB = 1024 * 1024;
const ARROW = "application/vnd.apache.arrow.stream";
const BODY_BYTES = 40 * MiB;

let server: TestServer;
let api: ReturnType<typeof client>;
let holder: http.ClientRequest;
const scratch = mkdtempSync(path.join(os.tmpdir(), "quiver-overload-"));
const bodyFile = path.join(scratch, "body.arrows");
const body = new Uint8Array(BODY_BYTES).fill(7);

beforeAll(async () => {
  server = await startServer({ QUIVER_MAX_BUFFERED_BODY_BYTES: String(8 * MiB) });
  api = client(server.url, server.auth);
  expect((await api.arrow("/v1/table/t/create", rows(0, 10))).status).toBe(200);
  writeFileSync(bodyFile, body);
  // Declares 64 MiB and sends one: the budget is held as long as this request waits for the rest. A holder that
  // arrived while another body was held is itself refused, and is made again.
  for (let tries = 0; ; tries++) {
    if (tries > 20) throw new Error("no request could hold the body budget");
    let refused = false;
    holder = http.request(`${server.url}/v1/table/t/insert`, {
      method: "POST",
      headers: { ...server.auth, "content-type": ARROW, "content-length": String(64 * MiB) },
    });
    holder.on("error", () => undefined);
    holder.on("response", () => (refused = true));
    holder.write(Buffer.alloc(MiB));
    await new Promise((r) => setTimeout(r, 300));
    if (!refused && (await api.arrow("/v1/table/t/insert", rows(100, 101))).status === 503) break;
    holder.destroy();
  }
});

afterAll(async () => {
  holder?.destroy();
  await server?.stop();
});

function expectSlowDown(reply: Reply) {
  expectError(reply, 503, ErrorCode.ServiceUnavailable);
  expect(reply.body.title).toBe("Slow down");
  expect(reply.headers.get("retry-after")).toBe("1");
}

describe("a body refused while it arrives", () => {
  it("is answered 503 with Retry-After to Node's fetch, every time", async () => {
    // On connections of their own: one the setup left idle in fetch's shared pool is closed by the server after its
    // keep-alive timeout, and a fetch that reuses it on a machine too busy to have noticed fails with EPIPE before its
    // request reaches the server at all, whatever the server does with a refused body.
    const fresh = client(server.url, server.auth, new Agent());
    const replies = await Promise.all(Array.from({ length: 12 }, () => fresh.arrow("/v1/table/t/insert", body)));
    replies.forEach(expectSlowDown);
  });

  it("is answered 503 with Retry-After to curl, every time", async () => {
    const runs = await Promise.all(Array.from({ length: 4 }, () => curl(`${server.url}/v1/table/t/insert`)));
    for (const run of runs) {
      expect(run.code, run.out).toBe(0);
      expect(run.out).toMatch(/^(HTTP\/1\.1 100 Continue\r\n\r\n)?HTTP\/1\.1 503 /);
      expect(run.out).toMatch(/\r\nretry-after: 1\r\n/i);
    }
  });

  it("is answered 503 to the LanceDB remote client, which says so", async () => {
    // Made before the client opens the table: made after, on a busy machine, it can take the server's keep-alive
    // timeout (5 s), and the client's pooled connection is then closed under its first write, whatever the server
    // does with a refused body.
    const big = new arrowCjs.Table({
      id: arrowCjs.vectorFromArray(
        Array.from({ length: 1_000_000 }, (_, i) => BigInt(i)),
        new arrowCjs.Int64(),
      ),
      x: arrowCjs.vectorFromArray(
        Array.from({ length: 1_000_000 }, (_, i) => i * 1.5),
        new arrowCjs.Float64(),
      ),
      s: arrowCjs.vectorFromArray(
        Array.from({ length: 1_000_000 }, (_, i) => `s${i}`),
        new arrowCjs.Utf8(),
      ),
    });
    const db = await lancedb.connect("db://default", { apiKey: server.adminKey, hostOverride: server.url, clientConfig: { retryConfig: { retries: 0 } } });
    const table = await db.openTable("t");
    const outcomes = await Promise.all(
      Array.from({ length: 4 }, () =>
        table.add(big).then(
          () => "added",
          (err: Error) => err.message,
        ),
      ),
    );
    for (const outcome of outcomes) {
      expect(outcome).toMatch(/503/);
      expect(outcome).toMatch(/Slow down|busy/);
      expect(outcome).not.toMatch(/broken pipe|reset|EPIPE|connection closed/i);
    }
  });

  it("keeps the connection while the body arrives, past a pause longer than the keep-alive timeout, then serves the next request on it", async () => {
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    let received = "";
    let closedAt: number | null = null;
    socket.on("data", (d) => (received += d));
    socket.on("end", () => (closedAt ??= Date.now()));
    socket.on("close", () => (closedAt ??= Date.now()));
    socket.on("error", () => undefined);
    const total = 16 * MiB;
    socket.write(
      `POST /v1/table/t/insert HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${server.adminKey}\r\ncontent-type: ${ARROW}\r\ncontent-length: ${total}\r\n\r\n`,
    );
    socket.write(Buffer.alloc(4 * MiB));
    for (let i = 0; i < 100 && !received.includes("\r\n\r\n"); i++) await new Promise((r) => setTimeout(r, 50));
    expect(received).toMatch(/^HTTP\/1\.1 503/);
    // Node's http server closes a connection that stays quiet for its keep-alive timeout (5 s) after an answer.
    await new Promise((r) => setTimeout(r, 6_500));
    expect(closedAt, "the server closed the connection while the refused body was still to come").toBeNull();
    await new Promise<void>((resolve, reject) => socket.write(Buffer.alloc(total - 4 * MiB), (err) => (err ? reject(err) : resolve())));
    const before = received.length;
    socket.write("GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
    for (let i = 0; i < 100 && !received.slice(before).includes("\r\n\r\n"); i++) await new Promise((r) => setTimeout(r, 50));
    expect(received.slice(before)).toMatch(/^HTTP\/1\.1 200/);
    socket.destroy();
  }, 30_000);
});

function curl(url: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      "curl",
      ["-sS", "-D", "-", "-o", "/dev/null", "-H", `x-api-key: ${server.adminKey}`, "-H", `content-type: ${ARROW}`, "--data-binary", `@${bodyFile}`, url],
      { maxBuffer: MiB },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}
