import { describe, expect, it } from "vitest";
import { Recent } from "../../src/engine/recent.js";

// The engine's values worked out again from the workspace (sandbox policies, file doors): served without
// waiting, renewed in the background once too old, and sooner once the workspace said it changed.

function counter(ages = { max: 60_000, afterChange: 2_000 }) {
  let clock = 0;
  let made = 0;
  const recent = new Recent(
    async () => ++made,
    { max: () => ages.max, afterChange: ages.afterChange },
    () => clock,
  );
  return {
    recent,
    advance: (ms: number) => {
      clock += ms;
    },
    made: () => made,
    /** Lets a background renewal finish. */
    settle: () => new Promise((resolve) => setImmediate(resolve)),
  };
}

describe("Recent", () => {
  it("serves one value until it is older than its age, then the renewed one without waiting", async () => {
    const { recent, advance, made, settle } = counter();
    expect(await recent.get()).toBe(1);
    advance(59_999);
    expect(await recent.get()).toBe(1);
    expect(made()).toBe(1);
    advance(1);
    // too old: still served while the next is worked out, then the next
    expect(await recent.get()).toBe(1);
    await settle();
    expect(await recent.get()).toBe(2);
    expect(made()).toBe(2);
  });

  it("renews after a change once the value is `afterChange` old, not before, and not without one", async () => {
    const { recent, advance, made, settle } = counter();
    await recent.get();
    advance(5_000);
    await recent.get();
    await settle();
    expect(made()).toBe(1);
    recent.changed();
    await recent.get();
    await settle();
    expect(await recent.get()).toBe(2);
    // a change right after a renewal waits until the new value is afterChange old
    recent.changed();
    advance(1_999);
    await recent.get();
    await settle();
    expect(made()).toBe(2);
    advance(1);
    await recent.get();
    await settle();
    expect(await recent.get()).toBe(3);
  });

  it("renews again for a change made while it was working one out", async () => {
    let clock = 0;
    let made = 0;
    let release: (() => void) | undefined;
    const recent = new Recent(
      () =>
        new Promise<number>((resolve) => {
          const value = ++made;
          if (value === 1) resolve(value);
          else release = () => resolve(value);
        }),
      { max: () => 60_000, afterChange: 1_000 },
      () => clock,
    );
    await recent.get();
    clock = 1_000;
    recent.changed();
    await recent.get(); // renewal 2 begins at 1000
    clock = 1_500;
    recent.changed(); // after renewal 2 began: its result is already old
    release?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await recent.get()).toBe(2);
    clock = 2_000;
    await recent.get();
    expect(made).toBe(3);
  });

  it("follows a max age that changes (the short timer while no events come)", async () => {
    const ages = { max: 60_000, afterChange: 2_000 };
    const { recent, advance, made, settle } = counter(ages);
    await recent.get();
    advance(5_000);
    await recent.get();
    expect(made()).toBe(1);
    ages.max = 5_000;
    await recent.get();
    await settle();
    expect(made()).toBe(2);
  });
});
