import { describe, expect, it } from "vitest";
import { bodyBuffers } from "./body-buffers";

const MiB = 1024 * 1024;
const memoryOf = (b: Buffer) => b.buffer;

describe("bodyBuffers", () => {
  it("never hands out a buffer that is still held, and reuses one once given back", () => {
    const first = bodyBuffers.take(6 * MiB);
    const second = bodyBuffers.take(6 * MiB);
    expect(first.buffer.length).toBe(6 * MiB);
    expect(memoryOf(second.buffer)).not.toBe(memoryOf(first.buffer));
    first.buffer.fill(1);
    second.buffer.fill(2);
    expect(first.buffer.every((b) => b === 1)).toBe(true);

    first.giveBack();
    first.giveBack();
    const third = bodyBuffers.take(5 * MiB);
    expect(third.buffer.length).toBe(5 * MiB);
    expect(memoryOf(third.buffer)).toBe(memoryOf(first.buffer));
    // Given back twice, it is still only one buffer: the next body gets a fresh one.
    const fourth = bodyBuffers.take(5 * MiB);
    expect(memoryOf(fourth.buffer)).not.toBe(memoryOf(first.buffer));
    for (const held of [second, third, fourth]) held.giveBack();
  });

  it("does not lend a buffer far larger than the body, nor pool small bodies", () => {
    const large = bodyBuffers.take(40 * MiB);
    large.giveBack();
    const small = bodyBuffers.take(6 * MiB);
    expect(memoryOf(small.buffer)).not.toBe(memoryOf(large.buffer));
    small.giveBack();
    const tiny = bodyBuffers.take(1024);
    tiny.giveBack();
    const next = bodyBuffers.take(1024).buffer;
    expect([memoryOf(next), next.byteOffset]).not.toEqual([memoryOf(tiny.buffer), tiny.buffer.byteOffset]);
  });
});
