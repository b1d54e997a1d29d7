/**
 * Reading request bodies within the size limit, the time limit and the shared budget of bodies held in memory, and
 * letting a refused body go by unread.
 */
import "server-only";
import { QuiverError, invalidInput } from "../errors";
import { config } from "../config";
import { ArrowBodyError, received, toIpcFile, type ArrowBody, type ReceivedBody } from "@/server/lance/arrow-ipc";
import { bodyBudget, slowDown } from "./admission";
import { bodySource } from "./body-source";
import { bodyBuffers, type BodyBuffer } from "./body-buffers";

/**
 * A body held against the shared body budget; `release` gives its bytes back once the request is done, after which
 * nothing may read the body (its buffer may hold the next request's body).
 */
export interface HeldBody {
  body: ReceivedBody;
  release: () => void;
}

/** A promise that fails with `error` once the request timeout has passed, unless cleared first. */
export function requestDeadline(error: () => QuiverError): { expired: Promise<never>; clear: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), config.requestTimeoutMs);
  });
  expired.catch(() => undefined);
  return { expired, clear: () => clearTimeout(timer) };
}

const bodyDeadline = () =>
  requestDeadline(() => new QuiverError("InvalidInput", `the request body did not arrive within ${config.requestTimeoutMs} ms`, { status: 408 }));

/**
 * Past this many bytes, a refused body that can only be read through Next's web stream is cut off: reading it all
 * would cost the busy server as much as accepting it. Node's own request stream is drained instead, at no memory cost.
 */
const DISCARD_AT_MOST = 8 * 1024 * 1024;

/** Before refusing a request whose body was never read, lets the body go by unread. */
export async function discardBody(request: Request) {
  const source = bodySource(request);
  if (!source) return;
  const deadline = bodyDeadline();
  await source.drop(DISCARD_AT_MOST, deadline.expired);
  deadline.clear();
}

/**
 * Reads a whole body, within the size limit, the time limit and (for Arrow bodies) the shared budget of bodies
 * held in memory: a declared length is reserved before the first byte is read, an undeclared one as it arrives.
 * With `room`, the body lands in one buffer with that many spare bytes around it; a declared length is read
 * straight into place.
 */
export async function readBody(request: Request, limit: number, budgeted: boolean, room = { before: 0, after: 0 }): Promise<HeldBody> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) throw tooLarge(limit);
  let reserved = 0;
  let taken: BodyBuffer | null = null;
  const release = () => {
    if (budgeted) bodyBudget.release(reserved);
    reserved = 0;
    taken?.giveBack();
  };
  const reserveUpTo = (size: number) => {
    if (!budgeted || size <= reserved) return;
    if (!bodyBudget.reserve(size - reserved, reserved)) throw slowDown("too many request bodies are held in memory");
    reserved = size;
  };
  // A declared empty body (a POST with no payload) has nothing to wait for.
  const empty = request.headers.get("content-length") === "0" && !request.headers.has("transfer-encoding");
  const source = empty ? null : bodySource(request);
  if (!source) return { body: received(Buffer.alloc(0)), release };
  let chunks: Buffer[] = [];
  let size = 0;
  let placed: Buffer | null = null;
  const deadline = bodyDeadline();
  try {
    reserveUpTo(Math.min(declared, limit));
    if (declared > 0 && (room.before > 0 || room.after > 0)) {
      taken = bodyBuffers.take(room.before + declared + room.after);
      placed = taken.buffer;
    }
    await source.pump((value) => {
      size += value.byteLength;
      if (size > limit) throw tooLarge(limit);
      reserveUpTo(size);
      if (!placed) chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      else if (size <= declared) placed.set(value, room.before + size - value.byteLength);
      else throw invalidInput(`the request body is longer than its Content-Length of ${declared} bytes`);
    }, deadline.expired);
    if (placed && size !== declared) throw invalidInput(`the request body ended after ${size} of the ${declared} bytes its Content-Length declared`);
  } catch (err) {
    release();
    chunks = [];
    await source.drop(DISCARD_AT_MOST, deadline.expired);
    throw err;
  } finally {
    deadline.clear();
  }
  if (placed) return { body: { whole: placed, start: room.before, length: size }, release };
  if (room.before === 0 && room.after === 0) return { body: received(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)), release };
  const whole = Buffer.allocUnsafe(room.before + size + room.after);
  let at = room.before;
  for (const chunk of chunks) at += chunk.copy(whole, at);
  return { body: { whole, start: room.before, length: size }, release };
}

function tooLarge(limit: number) {
  return new QuiverError("InvalidInput", `request body is larger than the limit of ${limit} bytes`, { status: 413 });
}

/** Reads a JSON body leniently: empty, `null` and `{}` are all "no fields"; malformed JSON is kept as an error. */
export async function readJsonBody(request: Request): Promise<{ value: Record<string, unknown> } | { error: QuiverError }> {
  const { body } = await readBody(request, config.maxJsonBodyBytes, false);
  const text = body.whole.toString("utf8", body.start, body.start + body.length).trim();
  if (text === "" || text === "null") return { value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: invalidInput("request body is not valid JSON") };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { error: invalidInput("request body must be a JSON object") };
  return { value: value as Record<string, unknown> };
}

/** An Arrow request body as the engine takes it (an IPC file); a body that is not Arrow IPC is the caller's 400. */
export function parseArrowBody(body: ReceivedBody): ArrowBody {
  try {
    return toIpcFile(body);
  } catch (err) {
    if (err instanceof ArrowBodyError) throw invalidInput(err.message);
    throw err;
  }
}
