import { describe, expect, it } from "vitest";
import { isLspError } from "../../src/lsp/errors.js";
import { FairScheduler } from "../../src/lsp/scheduler.js";

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

describe("FairScheduler", () => {
  it("serves branches round-robin, so a busy branch does not starve the others", async () => {
    const scheduler = new FairScheduler();
    const order: string[] = [];
    const jobs: Promise<unknown>[] = [];
    for (let i = 0; i < 10; i++) {
      jobs.push(scheduler.run("greedy", async () => order.push(`greedy${i}`)));
    }
    jobs.push(scheduler.run("b", async () => order.push("b0")));
    jobs.push(scheduler.run("c", async () => order.push("c0")));
    jobs.push(scheduler.run("b", async () => order.push("b1")));
    await Promise.all(jobs);
    // The first greedy job had already started; after it, one job per branch per round.
    expect(order.slice(0, 6)).toEqual(["greedy0", "greedy1", "b0", "c0", "greedy2", "b1"]);
    expect(order).toHaveLength(13);
  });

  it("runs one job at a time and isolates failures", async () => {
    const scheduler = new FairScheduler();
    let running = 0;
    let most = 0;
    const job = async (): Promise<number> => {
      running++;
      most = Math.max(most, running);
      await tick();
      running--;
      return most;
    };
    const failing = scheduler.run("x", async () => {
      throw new Error("boom");
    });
    const results = await Promise.allSettled([
      failing,
      ...Array.from({ length: 20 }, (_, i) => scheduler.run(`b${i % 4}`, job)),
    ]);
    expect(results[0]?.status).toBe("rejected");
    expect(results.slice(1).every((r) => r.status === "fulfilled")).toBe(true);
    expect(most).toBe(1);
  });

  it("calls its hooks around busy periods and rejects queued jobs on close", async () => {
    const events: string[] = [];
    const scheduler = new FairScheduler({
      before: () => events.push("before"),
      after: () => events.push("after"),
    });
    const first = scheduler.run("a", async () => {
      await tick();
      return 1;
    });
    const queued = scheduler.run("b", async () => 2).catch((e: unknown) => e);
    scheduler.close();
    expect(await first).toBe(1);
    const error = await queued;
    expect(isLspError(error, "shut-down")).toBe(true);
    expect(events).toEqual(["before", "after"]);
  });
});
