/**
 * How instances on one root ask each other for work: each process can listen on a port of its own (apart from the
 * API's, which the workers of `npm start` share, so it cannot name one process) at QUIVER_PEER_HOST, loopback unless
 * configured, and is named to the others in a lease it holds in the store, with a token made for this process.
 * Only a caller that read the lease (so can read the store) knows the token; anything else is refused. The listener
 * starts the first time this process offers to do work for others, and answers only the calls registered here.
 */
import "server-only";
import http from "node:http";
import os from "node:os";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { config } from "@/server/config";
import { INSTANCE } from "@/server/instance";
import { log } from "@/server/log";

/** How another instance reaches this one, as a lease names it. */
export interface PeerAddress {
  instance: string;
  /** The machine, so that a loopback address is used only by instances of the same one. */
  machine: string;
  url: string;
  token: string;
}

/** The peer answered that it does not do this work (any more): nothing was done. */
export class PeerDeclined extends Error {}

const MAX_BODY_BYTES = 4 * 1024 * 1024;
const token = randomBytes(32).toString("base64url");
const handlers = new Map<string, (body: unknown) => Promise<unknown>>();
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
let listening: Promise<PeerAddress> | undefined;

/** Answers the calls named `name` from other instances; a handler that throws PeerDeclined answers that it declined. */
export function handlePeerCalls(name: string, handler: (body: unknown) => Promise<unknown>) {
  handlers.set(name, handler);
}

/** This process's address for other instances, listening from the first call on. */
export function ownPeerAddress(): Promise<PeerAddress> {
  listening ??= listen().catch((err: unknown) => {
    listening = undefined;
    throw err;
  });
  return listening;
}

/** Whether this process can reach `peer` at all: a loopback address only on the machine it names. */
export function reachable(peer: PeerAddress): boolean {
  if (peer.instance === INSTANCE) return false;
  const host = new URL(peer.url).hostname;
  const loopback = host === "localhost" || host.startsWith("127.") || host === "[::1]";
  return !loopback || peer.machine === os.hostname();
}

function listen(): Promise<PeerAddress> {
  const server = http.createServer((req, res) => void answer(req, res));
  server.keepAliveTimeout = 30_000;
  // Another instance's idle connection must not keep this process alive once Next has closed its own server.
  server.on("connection", (socket) => socket.unref());
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    // Exclusive: a worker of `npm start` would otherwise share one socket with its siblings (Node's cluster hands
    // a listen to the primary), and a call meant for it could reach another.
    server.listen({ host: config.peerHost, port: config.peerPort, exclusive: true }, () => {
      server.off("error", reject);
      server.unref();
      const port = (server.address() as { port: number }).port;
      const host = config.peerHost.includes(":") ? `[${config.peerHost}]` : config.peerHost;
      resolve({ instance: INSTANCE, machine: os.hostname(), url: `http://${host}:${port}`, token });
    });
  });
}

async function answer(req: http.IncomingMessage, res: http.ServerResponse) {
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const name = /^\/peer\/([a-z-]+)$/.exec(req.url ?? "")?.[1];
  const handler = name === undefined ? undefined : handlers.get(name);
  const given = Buffer.from(req.headers.authorization?.replace(/^Bearer /, "") ?? "");
  const expected = Buffer.from(token);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return send(401, { error: "not a peer of this instance" });
  if (req.method !== "POST" || !handler) return send(404, { error: "no such call" });
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return send(413, { error: "call too large" });
      chunks.push(chunk);
    }
    send(200, await handler(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
  } catch (err) {
    if (err instanceof PeerDeclined) return send(409, { error: err.message });
    log.error({ err, call: name }, "a call from another instance failed");
    send(500, { error: err instanceof Error ? err.message : String(err) });
  }
}

/**
 * Calls `name` on `peer`. Throws PeerDeclined when it answered that it does not do this work, and any other error when
 * the call failed; then whether the work was done is not known (the peer may have done it and died before answering).
 */
export function callPeer(peer: PeerAddress, name: string, body: unknown, timeoutMs: number): Promise<unknown> {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${peer.url}/peer/${name}`,
      {
        method: "POST",
        agent,
        timeout: timeoutMs,
        headers: { authorization: `Bearer ${peer.token}`, "content-type": "application/json", "content-length": payload.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          } catch {
            return reject(new Error(`instance ${peer.instance} answered ${res.statusCode} without JSON`));
          }
          if (res.statusCode === 200) return resolve(parsed);
          const message = (parsed as { error?: string })?.error ?? `status ${res.statusCode}`;
          reject(res.statusCode === 409 ? new PeerDeclined(message) : new Error(`instance ${peer.instance}: ${message}`));
        });
      },
    );
    // Nor may this process's connections to others keep it alive when it stops.
    req.on("socket", (socket) => socket.unref());
    req.on("timeout", () => req.destroy(new Error(`instance ${peer.instance} did not answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end(payload);
  });
}
