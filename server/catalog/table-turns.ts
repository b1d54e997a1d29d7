/**
 * A table directory's write turn, shared by the catalog (drops, moves, deregisters) and the table operations (writes):
 * one at a time within this process, and under `npm start` one worker of the machine at a time (server/peers/
 * machine-turns.ts). A drop that waited for a write's turn finds the write done, and a write that waited behind a drop
 * finds the table gone, whichever worker of the machine each runs in. Instances on other machines meet only in the
 * store, where the catalog's look after each write (Tables.unlessDropped) settles a drop that raced it.
 */
import "server-only";
import { KeyedLock } from "@/server/catalog/keyed-lock";
import { inMachineTurn } from "@/server/peers/machine-turns";

export class TableTurns {
  private readonly inProcess = new KeyedLock();

  run<T>(location: string, work: () => Promise<T>): Promise<T> {
    return this.inProcess.run(location, () => inMachineTurn(location, work));
  }
}
