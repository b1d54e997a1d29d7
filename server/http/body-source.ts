/**
 * Where a request body's bytes are read from. Next hands a route handler a web `Request` whose body is an adapter
 * over Node's own request stream; each 64 KiB chunk then passes through an async iterator, a byte stream and a copy,
 * which made reading a 36 MB Arrow body take about twice as long as reading the socket. So the server's `request`
 * events run inside an AsyncLocalStorage that holds Node's request, and a handler reads that request directly when
 * nobody has read from it yet. Anything else (a body Next has already buffered, for example) is read through the
 * web stream.
 */
import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";
import http, { type IncomingMessage } from "node:http";

const STORE = Symbol.for("quiver.nodeRequest");
type Holder = { [STORE]?: AsyncLocalStorage<IncomingMessage> };

/** Called once at server start, before requests arrive; every later `request` event carries its Node request. */
export function captureNodeRequests(): void {
  const holder = globalThis as Holder;
  if (holder[STORE]) return;
  const store = new AsyncLocalStorage<IncomingMessage>();
  holder[STORE] = store;
  type Emit = (this: http.Server, event: string | symbol, ...args: unknown[]) => boolean;
  const emit = http.Server.prototype.emit as Emit;
  const emitWithin: Emit = function (event, ...args) {
    if (event === "request") return store.run(args[0] as IncomingMessage, () => emit.call(this, event, ...args));
    return emit.call(this, event, ...args);
  };
  http.Server.prototype.emit = emitWithin as typeof http.Server.prototype.emit;
}

export interface BodySource {
  /** Hands each chunk to `onChunk` until the body ends; fails with whatever `onChunk` throws, or when `expired` fails. */
  pump(onChunk: (chunk: Uint8Array) => void, expired: Promise<never>): Promise<void>;
  /**
   * The rest of the body is not wanted: it is let go by unread (as far as `atMost` bytes for a stream that can only
   * be cancelled), so that a client still sending it receives the answer instead of a broken connection.
   */
  drop(atMost: number, expired: Promise<never>): Promise<void>;
}

/** Node requests whose body a source already took: only that source may read or drop it. */
const taken = new WeakSet<IncomingMessage>();

/** The body's source; null when there is no body, or when it was already taken (read, or being dropped). */
export function bodySource(request: Request): BodySource | null {
  const incoming = nodeRequestOf(request);
  if (incoming && taken.has(incoming)) return null;
  if (incoming && !incoming.readableDidRead && !incoming.readableEnded && !incoming.destroyed) {
    taken.add(incoming);
    return nodeSource(incoming);
  }
  if (!request.body || request.bodyUsed) return null;
  return webSource(request.body.getReader());
}

/** Node's request behind `request`, unless a proxy layer made up another request in its place. */
function nodeRequestOf(request: Request): IncomingMessage | undefined {
  const incoming = (globalThis as Holder)[STORE]?.getStore();
  if (!incoming || incoming.method !== request.method) return undefined;
  if ((incoming.headers["content-length"] ?? null) !== request.headers.get("content-length")) return undefined;
  return incoming;
}

function nodeSource(incoming: IncomingMessage): BodySource {
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
    // Flowing with no listener, Node reads what is left and throws it away, as it does for a body never read.
    drop: async () => void incoming.resume(),
  };
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
