/**
 * Shares reads of state that other instances change (the catalog's version, a table's latest manifest, a record
 * listing's stamp) among concurrent requests without ever answering one with a read older than the request: a caller
 * joins a read only if it began after the caller asked. While a read is under way, every caller that asks meanwhile
 * waits for the one next read, which starts when the current one ends. So a request still sees every change that
 * was acknowledged before it arrived, and under load one store round trip serves a whole batch of requests.
 */
import "server-only";

export class FreshRead<T> {
  private current?: Promise<T>;
  private next?: Promise<T>;

  constructor(private readonly read: () => Promise<T>) {}

  get(): Promise<T> {
    if (!this.current) return this.start();
    this.next ??= this.current.then(
      () => this.startNext(),
      () => this.startNext(),
    );
    return this.next;
  }

  /** True when no read is under way or waiting, so a keyed owner may forget it. */
  get idle(): boolean {
    return !this.current && !this.next;
  }

  private startNext(): Promise<T> {
    this.next = undefined;
    return this.start();
  }

  private start(): Promise<T> {
    const read = this.read();
    this.current = read;
    const done = () => {
      if (this.current === read) this.current = undefined;
    };
    read.then(done, done);
    return read;
  }
}

/** A FreshRead per key (a table's location), forgotten once nothing is reading it. */
export class KeyedFreshRead<T> {
  private readonly reads = new Map<string, FreshRead<T>>();

  get(key: string, read: () => Promise<T>): Promise<T> {
    let fresh = this.reads.get(key);
    if (!fresh) {
      fresh = new FreshRead(read);
      this.reads.set(key, fresh);
    }
    const answer = fresh.get();
    const forget = () => {
      if (this.reads.get(key) === fresh && fresh.idle) this.reads.delete(key);
    };
    answer.then(forget, forget);
    return answer;
  }
}
