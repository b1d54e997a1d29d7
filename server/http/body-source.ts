/**
 * Where a request body's bytes are read from. Next hands a route handler a web `Request` whose body is an adapter
 * over Node's own request stream; each 64 KiB chunk then passes through an async iterator, a byte stream and a copy,
 * which made reading a 36 MB Arrow body take about twice as long as reading the socket. So the server's `request`
 * events run inside an AsyncLocalStorage that holds Node's request and response, and a handler reads that request
 * directly when nobody has read from it yet. Anything else (a body Next has already buffered, for example) is read
 * through the web stream.
 */
import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";
import http, { type IncomingMessage, type ServerResponse } from "node:http";

const STORE = Symbol.for("quiver.nodeRequest");
interface NodeExchange {
  incoming: IncomingMessage;
  response: ServerResponse;
}
type Holder = { [STORE]?: AsyncLocalStorage<NodeExchange> };

/** Called once at server start, before requests arrive; every later `request` event carries its Node request. */
export function captureNodeRequests(): void {
  const holder = globalThis as Holder;
  if (holder[STORE]) return;
  const store = new AsyncLocalStorage<NodeExchange>();
  holder[STORE] = store;
  type Emit = (this: http.Server, event: string | symbol, ...args: unknown[]) => boolean;
  const emit = http.Server.prototype.emit as Emit;
  const emitWithin: Emit = function (event, ...args) {
    if (event === "request") {
      const exchange = { incoming: args[0] as IncomingMessage, response: args[1] as ServerResponse };
      return store.run(exchange, () => emit.call(this, event, ...args));
    }
    return emit.call(this, event, ...args);
  };
  http.Server.prototype.emit = emitWithin as typeof http.Server.prototype.emit;
}

export interface BodySource {
  /** Hands each chunk to `onChunk` until the body ends; fails with whatever `onChunk` throws, or when `expired` fails. */
  pump(onChunk: (chunk: Uint8Array) => void, expired: Promise<never>): Promise<void>;
  /**
   * The rest of the body is not wanted: it is read and thrown away, within a bound, so that a client still sending
   * it receives the answer instead of a broken connection. Node's own request is drained in the background (see
   * `discardRest`); a stream that can only be cancelled is read for up to `atMost` bytes before the answer goes.
   */
  drop(atMost: number, expired: Promise<never>): Promise<void>;
}

/**
 * How much of a refused body is read and thrown away, and for how long, before its connection is closed: a client
 * that writes its whole body before it reads the answer (Node's fetch does) gets a broken pipe instead of the answer
 * when the server closes while the body is still arriving. As servers do with a lingering close, the rest is read
 * within these bounds; past them the connection is cut once the answer is out (a client still sending then sees a
 * reset).
 */
const LINGER_BYTES = 256 * 1024 * 1024;
const LINGER_MS = 30_000;

/** Node requests whose body a source already took: only that source may read or drop it. */
const taken = new WeakSet<IncomingMessage>();

/** The body's source; null when there is no body, or when it was already taken (read, or being dropped). */
export function bodySource(request: Request): BodySource | null {
  const exchange = nodeExchangeOf(request);
  const incoming = exchange?.incoming;
  if (incoming && taken.has(incoming)) return null;
  if (exchange && incoming && !incoming.readableDidRead && !incoming.readableEnded && !incoming.destroyed) {
    taken.add(incoming);
    return nodeSource(exchange);
  }
  if (!request.body || request.bodyUsed) return null;
  return webSource(request.body.getReader());
}

/**
 * Runs `then` once the answer to `request` has been handed to the connection whole; never when the connection
 * closed before (the client, or a load balancer, did not get it), nor when Node's response is out of reach.
 */
export function whenAnswerSent(request: Request, then: () => void): void {
  const response = nodeExchangeOf(request)?.response;
  if (!response) return;
  if (response.writableFinished) return then();
  const sent = () => {
    response.off("close", lost);
    then();
  };
  const lost = () => response.off("finish", sent);
  response.once("finish", sent);
  response.once("close", lost);
}

/** Node's request and response behind `request`, unless a proxy layer made up another request in its place. */
function nodeExchangeOf(request: Request): NodeExchange | undefined {
  const exchange = (globalThis as Holder)[STORE]?.getStore();
  if (!exchange || exchange.incoming.method !== request.method) return undefined;
  if ((exchange.incoming.headers["content-length"] ?? null) !== request.headers.get("content-length")) return undefined;
  return exchange;
}

function nodeSource({ incoming, response }: NodeExchange): BodySource {
  return {
    pump: (onChunk, expired) =>
      new Promise<void>((resolve, reject) => {
        const finish = (err?: unknown) => {
          incoming.off("data", data).off("end", end).off("error", finish).off("close", closed);
          incoming.pause();
          if (err) reject(err);
          else resolve();
        };
        const data = (chunk: Buffer) => {
          try {
            onChunk(chunk);
          } catch (err) {
            finish(err);
          }
        };
        const end = () => finish();
        const closed = () => finish(new Error("the client closed the connection before the request body ended"));
        expired.catch(finish);
        incoming.on("data", data).on("end", end).on("error", finish).on("close", closed);
      }),
    drop: async (_atMost, expired) => discardRest(incoming, response, expired),
  };
}

/**
 * Reads the rest of a refused body and throws it away while the answer goes out, keeping the connection open until
 * the body has arrived (the client may then send its next request on it). Node's http server would otherwise close
 * the connection once the answer is sent and nothing has arrived for its keep-alive timeout (5 s), even while the
 * refused body is still on its way: a client or a server stalled for that long turned a 503 into a broken pipe. A
 * request that is not complete and answers its socket's `timeout` event keeps the connection, so the bounds here
 * decide instead: past LINGER_BYTES or LINGER_MS, or once the body's deadline has passed (its client stopped
 * sending), the connection is closed after the answer.
 */
function discardRest(incoming: IncomingMessage, response: ServerResponse, expired: Promise<never>): void {
  const socket = incoming.socket;
  let discarded = 0;
  let lingering = true;
  const stop = () => {
    lingering = false;
    clearTimeout(timer);
    incoming.off("data", count).off("timeout", keep).off("end", stop).off("close", stop);
  };
  const cut = () => {
    if (!lingering) return;
    stop();
    if (response.writableFinished) socket.destroy();
    else response.once("finish", () => socket.destroy()).once("close", () => socket.destroy());
  };
  const count = (chunk: Buffer) => {
    discarded += chunk.byteLength;
    if (discarded > LINGER_BYTES) cut();
  };
  const keep = () => undefined;
  const timer = setTimeout(cut, LINGER_MS);
  timer.unref();
  expired.catch(cut);
  incoming.on("data", count).on("timeout", keep).once("end", stop).once("close", stop);
  incoming.resume();
}

function webSource(reader: ReadableStreamDefaultReader<Uint8Array>): BodySource {
  const pump = async (onChunk: (chunk: Uint8Array) => void, expired: Promise<never>) => {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), expired]);
      if (done) return;
      onChunk(value);
    }
  };
  return {
    pump,
    drop: async (atMost, expired) => {
      let dropped = 0;
      try {
        await pump((chunk) => {
          dropped += chunk.byteLength;
          if (dropped > atMost) throw new Error("more than is worth reading");
        }, expired);
        return;
      } catch {
        // too much, or the deadline passed: cut the body off below
      }
      // Not awaited: cancelling a stream whose client has gone quiet waits for that client.
      reader.cancel().catch(() => undefined);
    },
  };
}
