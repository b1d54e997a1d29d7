/**
 * Admission control for heavy requests (Arrow writes, queries, rewrites): a bounded number run at once, a bounded
 * number wait for a turn, and the request bodies held in memory share one byte budget. Past those bounds a request
 * is turned away at once with "Slow down" rather than queued without bound, so an overload cannot exhaust memory
 * and the server recovers as soon as the load stops.
 */
import "server-only";
import { config } from "@/server/config";
import { QuiverError } from "@/server/errors";
import { metrics } from "@/server/metrics";

export const slowDown = (reason: string) => new QuiverError("ServiceUnavailable", `the service is busy: ${reason}; retry after a moment`);

export class Admission {
  private running = 0;
  private readonly waiting: Array<{ admit: () => void }> = [];

  constructor(
    private readonly concurrent: number,
    private readonly queued: number,
    private readonly waitMs: number,
    /** Told the numbers running and waiting whenever they change. */
    private readonly report: (running: number, waiting: number) => void = () => {},
  ) {}

  private changed() {
    this.report(this.running, this.waiting.length);
  }

  /** Resolves with a release function once the request may run; throws "Slow down" when the queue is full or the wait too long. */
  async enter(): Promise<() => void> {
    if (this.running < this.concurrent) return this.take();
    if (this.waiting.length >= this.queued) throw slowDown(`${this.running} heavy requests are running and ${this.waiting.length} are waiting`);
    await new Promise<void>((resolve, reject) => {
      const entry = { admit: () => (clearTimeout(timer), resolve()) };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(entry), 1);
        this.changed();
        reject(slowDown(`no turn came within ${this.waitMs} ms`));
      }, this.waitMs);
      this.waiting.push(entry);
      this.changed();
    });
    return this.take();
  }

  private take(): () => void {
    this.running++;
    this.changed();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.waiting.shift()?.admit();
      this.changed();
    };
  }
}

/**
 * The bytes of request bodies held in memory at once. One body may always be held, whatever its size up to the
 * body limit; beyond that, bodies are admitted only while the total stays within the budget.
 */
export class BodyBudget {
  private held = 0;

  constructor(private readonly budget: number) {}

  /** Reserves `bytes` more for a body that already holds `already`; false when that would overrun the budget. */
  reserve(bytes: number, already: number): boolean {
    const others = this.held - already;
    if (others > 0 && this.held + bytes > this.budget) return false;
    this.held += bytes;
    return true;
  }

  release(bytes: number) {
    this.held -= bytes;
  }
}

export const heavyRequests = new Admission(config.maxHeavyRequests, config.maxQueuedRequests, config.queueWaitMs, (running, waiting) => {
  metrics.heavyRunning.set(running);
  metrics.heavyQueued.set(waiting);
});
export const bodyBudget = new BodyBudget(config.maxBufferedBodyBytes);
