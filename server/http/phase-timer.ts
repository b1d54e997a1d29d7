/**
 * Times the phases of one API request for its `Server-Timing` header, so a slow call shows where its time went
 * (reading the body, waiting for admission, the catalog and engine work) without a profiler.
 */
import "server-only";
import { traced, tracedSince } from "@/server/tracing";

/** The phases also become spans of the request's trace, where tracing is on (server/tracing.ts). */
export class PhaseTimer {
  private readonly start = performance.now();
  private last = this.start;
  private readonly phases: Array<[string, number]> = [];

  /** Ends a phase that ran from the previous phase's end until now. */
  mark(name: string): void {
    tracedSince(name, this.last);
    this.close(name);
  }

  /** Times one awaited step, started here (in its span); the moments between steps belong to no phase. */
  async time<T>(name: string, work: () => Promise<T>): Promise<T> {
    this.last = performance.now();
    try {
      return await traced(name, {}, work);
    } finally {
      this.close(name);
    }
  }

  header(): string {
    const total = performance.now() - this.start;
    return [...this.phases, ["total", total] as const].map(([name, ms]) => `${name};dur=${ms.toFixed(1)}`).join(", ");
  }

  private close(name: string): void {
    const now = performance.now();
    this.phases.push([name, now - this.last]);
    this.last = now;
  }
}
