/**
 * Times the phases of one API request for its `Server-Timing` header, so a slow call shows where its time went
 * (reading the body, waiting for admission, the catalog and engine work) without a profiler.
 */
import "server-only";
export class PhaseTimer {
  private readonly start = performance.now();
  private last = this.start;
  private readonly phases: Array<[string, number]> = [];

  /** Ends a phase that ran from the previous phase's end until now. */
  mark(name: string): void {
    const now = performance.now();
    this.phases.push([name, now - this.last]);
    this.last = now;
  }

  /** Times one awaited step; the moments between steps belong to no phase. */
  async time<T>(name: string, work: Promise<T>): Promise<T> {
    this.last = performance.now();
    try {
      return await work;
    } finally {
      this.mark(name);
    }
  }

  header(): string {
    const total = performance.now() - this.start;
    return [...this.phases, ["total", total] as const].map(([name, ms]) => `${name};dur=${ms.toFixed(1)}`).join(", ");
  }
}
