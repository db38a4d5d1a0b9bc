import { describe, expect, it } from "vitest";
import { createLimiter } from "../../src/workspace/limit.js";

describe("createLimiter", () => {
  it("never runs more than the limit at once, runs everything, in order", async () => {
    const limit = createLimiter(3);
    let active = 0;
    let peak = 0;
    const started: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 3000 }, (_, i) =>
        limit(async () => {
          started.push(i);
          active++;
          peak = Math.max(peak, active);
          await new Promise((resolve) => setImmediate(resolve));
          active--;
          return i * 2;
        }),
      ),
    );
    expect(peak).toBe(3);
    expect(results[2999]).toBe(5998);
    expect(started).toEqual(Array.from({ length: 3000 }, (_, i) => i));
  });

  it("passes rejections through and keeps going", async () => {
    const limit = createLimiter(1);
    const failing = limit(() => Promise.reject(new Error("boom")));
    const throwing = limit(() => {
      throw new Error("sync boom");
    });
    const fine = limit(async () => "ok");
    await expect(failing).rejects.toThrow("boom");
    await expect(throwing).rejects.toThrow("sync boom");
    await expect(fine).resolves.toBe("ok");
  });
});
