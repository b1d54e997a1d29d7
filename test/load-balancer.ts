/**
 * A load balancer in front of Quiver instances that behaves as nginx does by default: requests go round the
 * upstreams; one that cannot be connected to is passed over (for a while, as nginx's `max_fails=1 fail_timeout`
 * does) before anything is sent; a request whose upstream fails or closes its connection before answering (the
 * instance died) is answered 502 Bad Gateway, never sent to a second upstream once sent. Tests can send the requests
 * they pick to an upstream of their choosing and hold back the answers they pick, so that a client's read timeout
 * fires.
 */
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { heldAnswers } from "./latency-proxy";

export interface Passed {
  method: string;
  path: string;
  /** The request's id as the write ledger knows it: its Idempotency-Key, or else its x-request-id. */
  requestId: string | null;
  upstream: number;
  /** When it arrived (ms since the epoch), and what the balancer's `label` said the request is. */
  at: number;
  label?: string;
  /** What the client was answered: the upstream's status, or 502 when the upstream went away. */
  status?: number;
}

export interface LoadBalancer {
  url: string;
  /** Requests in the order they arrived. */
  passed: () => Passed[];
  /** Sends the requests `matches` picks to upstream `index` (the latest choice that picks a request wins). */
  send: (matches: (request: Passed) => boolean, index: number) => void;
  /** Holds back the answers to the requests `matches` picks until the returned function is called. */
  holdAnswers: (matches: (request: Passed) => boolean) => () => void;
  stop: () => Promise<void>;
}

/** How long an upstream that refused a connection is passed over. */
const DOWN_FOR_MS = 2000;

export async function startLoadBalancer(
  upstreams: string[],
  options: {
    label?: (request: { path: string; headers: http.IncomingHttpHeaders }) => string | undefined;
    /** What to hash a request on to pick its upstream (nginx's `hash … consistent`); round the upstreams without it. */
    hashOn?: (path: string) => string;
  } = {},
): Promise<LoadBalancer> {
  const passed: Passed[] = [];
  const choices: Array<{ matches: (r: Passed) => boolean; index: number }> = [];
  const held = heldAnswers<Passed>();
  const downUntil = upstreams.map(() => 0);
  let next = 0;
  const server = http.createServer((req, res) => void balance(req, res));
  const balance = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    // Read whole first, so that a request an upstream refused can be sent to the next (bodies in tests are small).
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const path = new URL(req.url ?? "/", "http://lb").pathname;
    const seen: Passed = {
      method: req.method ?? "",
      path,
      requestId: (req.headers["idempotency-key"] as string | undefined) ?? (req.headers["x-request-id"] as string | undefined) ?? null,
      upstream: -1,
      at: Date.now(),
      label: options.label?.({ path, headers: req.headers }),
    };
    const chosen = [...choices].reverse().find((c) => c.matches(seen));
    passed.push(seen);
    res.on("error", () => undefined);
    const gone = () => {
      seen.status = 502;
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end("502 Bad Gateway");
    };
    const pick = (tried: number) => {
      if (chosen) return chosen.index;
      if (options.hashOn) return createHash("sha1").update(options.hashOn(path)).digest().readUInt32BE(0) % upstreams.length;
      for (let i = 0; i < upstreams.length; i++) {
        const index = next++ % upstreams.length;
        if (downUntil[index] <= Date.now() || tried + i >= upstreams.length) return index;
      }
      return next++ % upstreams.length;
    };
    const send = (tried: number) => {
      seen.upstream = pick(tried);
      const target = new URL(upstreams[seen.upstream]);
      const forward = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent: false },
        (answer) => {
          void held.until(seen).then(() => {
            seen.status = answer.statusCode;
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
            answer.on("error", () => res.destroy());
          });
        },
      );
      forward.on("error", (err: NodeJS.ErrnoException) => {
        // Nothing was sent to an upstream that refused the connection: the next one may take the request.
        if (err.code === "ECONNREFUSED") {
          downUntil[seen.upstream] = Date.now() + DOWN_FOR_MS;
          if (!chosen && tried + 1 < upstreams.length) return send(tried + 1);
        }
        gone();
      });
      forward.end(body);
    };
    send(0);
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    passed: () => [...passed],
    send: (matches, index) => choices.push({ matches, index }),
    holdAnswers: held.hold,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
