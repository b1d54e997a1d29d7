/**
 * A store with latency, on this machine: an HTTP proxy in front of Azurite or moto's S3 that holds each answer back a
 * fixed time (S3, GCS and Azure answer a request in 10-50 ms, where a store on loopback answers in well under one) and counts
 * and records the requests that pass, so that tests can assert how many store requests an operation makes and the
 * bench can time operations where users run them. Written in erasable TypeScript only: the bench imports it as is
 * (Node strips the types).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface StoreRequest {
  method: string;
  /** The object's path (on Azure below the account, on S3 from the bucket), without the query. */
  path: string;
  /** The credentials it came with (its Authorization header), as the store got them. */
  authorization?: string;
  /** What the request does: list, read, head, write, delete or other. */
  kind: string;
  /** A listing's prefix. */
  prefix?: string;
  /** When it arrived, in milliseconds since the last `reset`. */
  at: number;
  /** The store's status, once it answered: a refused conditional write (409, 412) is a commit that lost a race. */
  status?: number;
}

export interface LatencyProxy {
  /** The proxy's own endpoint, in the form the store's is (Azurite's with its account path, `/devstoreaccount1`). */
  endpoint: string;
  port: number;
  /** Requests answered since the last `reset`, in the order they arrived. */
  requests: () => StoreRequest[];
  reset: () => void;
  setLatency: (ms: number) => void;
  /**
   * Holds back the answers to the requests `matches` picks (the store has already answered them: what they answer is
   * the store as it was when they arrived) until the returned function is called.
   */
  holdAnswers: (matches: (request: StoreRequest) => boolean) => () => void;
  /**
   * Spoils the store's answers to the next `times` requests `matches` picks: answered 503 (Azure's ServerBusy, S3's
   * SlowDown) in their place,
   * or cut off halfway through their body (the connection closed under it); until the next `reset`.
   */
  spoilAnswers: (matches: (request: StoreRequest) => boolean, how: "503" | "cut", times: number) => { spoiled: () => number };
  stop: () => Promise<void>;
}

/**
 * Answers a test proxy holds back: a test picks requests with `hold` and lets their answers go with the function it
 * gets back; the proxy waits for `until(request)` before it answers (this one, and test/load-balancer.ts).
 */
export function heldAnswers<R>() {
  const holds: Array<{ matches: (request: R) => boolean; released: Promise<void> }> = [];
  return {
    /** Holds back the answers to the requests `matches` picks until the returned function is called. */
    hold: (matches: (request: R) => boolean): (() => void) => {
      let release = () => {};
      const hold = { matches, released: new Promise<void>((resolve) => (release = resolve)) };
      holds.push(hold);
      return () => {
        const at = holds.indexOf(hold);
        if (at >= 0) holds.splice(at, 1);
        release();
      };
    },
    /** Settles once every hold that picks `request` has been let go. */
    until: (request: R): Promise<unknown> => Promise.all(holds.filter((hold) => hold.matches(request)).map((hold) => hold.released)),
  };
}

/** The kinds of store the proxy can stand in front of, as test/store-server.ts names them. */
export type ProxiedStore = { kind: "azurite" | "s3"; endpoint: string };

/** What an Azure Blob or S3 request does, from its method and query. */
export function kindOf(method: string, query: URLSearchParams): string {
  if (method === "GET" && (query.get("comp") === "list" || query.has("list-type"))) return "list";
  if (method === "GET") return "read";
  if (method === "HEAD") return "head";
  if (method === "PUT") return "write";
  if (method === "DELETE" || (method === "POST" && query.has("delete"))) return "delete";
  return "other";
}

/** The store's own answer when it is too busy, as the engine and OpenDAL expect it of each kind. */
const BUSY: Record<ProxiedStore["kind"], { headers: Record<string, string>; body: string }> = {
  azurite: {
    headers: { "content-type": "application/xml", "x-ms-error-code": "ServerBusy" },
    body: '<?xml version="1.0" encoding="utf-8"?><Error><Code>ServerBusy</Code><Message>busy</Message></Error>',
  },
  s3: {
    headers: { "content-type": "application/xml" },
    body: '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>',
  },
};

/** Starts a proxy to `store` (its endpoint, Azurite's account path included) that answers each request `latencyMs` late. */
export async function startLatencyProxy(store: ProxiedStore, latencyMs: number): Promise<LatencyProxy> {
  const target = new URL(store.endpoint);
  const busy = BUSY[store.kind];
  let latency = latencyMs;
  let seen: StoreRequest[] = [];
  let since = performance.now();
  const held = heldAnswers<StoreRequest>();
  const spoils: Array<{ matches: (request: StoreRequest) => boolean; how: "503" | "cut"; left: number }> = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://proxy");
    const kind = kindOf(req.method ?? "", url.searchParams);
    const record: StoreRequest = {
      method: req.method ?? "",
      path: decodeURIComponent(url.pathname),
      ...(req.headers.authorization === undefined ? {} : { authorization: req.headers.authorization }),
      kind,
      ...(kind === "list" ? { prefix: url.searchParams.get("prefix") ?? "" } : {}),
      at: performance.now() - since,
    };
    seen.push(record);
    const started = Date.now();
    const forward = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host }, agent },
      (answer) => {
        record.status = answer.statusCode;
        const wait = Math.max(0, started + latency - Date.now());
        const released = held.until(record);
        setTimeout(() => {
          void released.then(() => {
            const spoil = spoils.find((candidate) => candidate.left > 0 && candidate.matches(record));
            if (!spoil) {
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              answer.pipe(res);
              return;
            }
            spoil.left--;
            if (spoil.how === "503") {
              answer.resume();
              record.status = 503;
              res.writeHead(503, busy.headers);
              res.end(busy.body);
              return;
            }
            const chunks: Buffer[] = [];
            answer.on("data", (chunk: Buffer) => chunks.push(chunk));
            answer.on("end", () => {
              const body = Buffer.concat(chunks);
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              res.write(body.subarray(0, Math.floor(body.length / 2)));
              setTimeout(() => res.socket?.destroy(), 5);
            });
          });
        }, wait);
      },
    );
    forward.on("error", (err) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(err));
    });
    req.pipe(forward);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}${target.pathname.replace(/\/$/, "")}`,
    port,
    requests: () => [...seen],
    reset: () => {
      spoils.length = 0;
      seen = [];
      since = performance.now();
    },
    setLatency: (ms) => {
      latency = ms;
    },
    holdAnswers: held.hold,
    spoilAnswers: (matches, how, times) => {
      const spoil = { matches, how, left: times };
      spoils.push(spoil);
      return { spoiled: () => times - spoil.left };
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
