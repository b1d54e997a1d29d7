/**
 * Large request bodies land in buffers kept for the next large body. Writing a body into a fresh buffer of 36 MB
 * pays a page fault every 4 KiB, and dropping it adds to the external memory that makes V8 collect garbage (marking
 * all of Next's heap) while the next body arrives: on a 1M-row insert, reading the body into a fresh buffer took
 * about twice as long as into a reused one. A buffer is reused only once the request that held it has given it
 * back, and idle buffers are let go after a while, so an idle server holds none.
 */
import "server-only";

/** Smaller bodies are allocated afresh: the pool would save little and hold many. */
const POOLED_FROM = 4 * 1024 * 1024;
/** Sizes are rounded up to this, so that bodies of nearly the same size share buffers. */
const GRAIN = 4 * 1024 * 1024;
const IDLE_LIMIT = 128 * 1024 * 1024;
const KEEP_IDLE_MS = 30_000;

export interface BodyBuffer {
  /** Exactly the size asked for. */
  buffer: Buffer;
  /** Gives the buffer back for another body; nothing may read or write it afterwards. */
  giveBack: () => void;
}

class BodyBuffers {
  private idle: Array<{ whole: Buffer; since: number }> = [];
  private idleBytes = 0;
  private sweeper: NodeJS.Timeout | undefined;

  take(size: number): BodyBuffer {
    if (size < POOLED_FROM) return { buffer: Buffer.allocUnsafe(size), giveBack: () => undefined };
    // The smallest idle buffer that holds the body without wasting more than its size again.
    let best = -1;
    this.idle.forEach(({ whole }, i) => {
      if (whole.length >= size && whole.length <= 2 * size && (best < 0 || whole.length < this.idle[best].whole.length)) best = i;
    });
    let whole: Buffer;
    if (best >= 0) {
      whole = this.idle.splice(best, 1)[0].whole;
      this.idleBytes -= whole.length;
    } else {
      whole = Buffer.allocUnsafe(Math.ceil(size / GRAIN) * GRAIN);
    }
    let given = false;
    return {
      buffer: whole.subarray(0, size),
      giveBack: () => {
        if (given) return;
        given = true;
        this.keep(whole);
      },
    };
  }

  private keep(whole: Buffer) {
    if (this.idleBytes + whole.length > IDLE_LIMIT) return;
    this.idle.push({ whole, since: Date.now() });
    this.idleBytes += whole.length;
    this.sweeper ??= setInterval(() => this.sweep(), KEEP_IDLE_MS / 3).unref();
  }

  private sweep() {
    const cutoff = Date.now() - KEEP_IDLE_MS;
    this.idle = this.idle.filter(({ whole, since }) => {
      if (since >= cutoff) return true;
      this.idleBytes -= whole.length;
      return false;
    });
    if (this.idle.length === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}

export const bodyBuffers = new BodyBuffers();
