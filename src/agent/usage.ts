import type { AgentConfig } from "../config/config.js";

/** Tokens (and cost, when a price is configured) of a session. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Model calls that returned (retries of failed calls not counted). */
  calls: number;
  /** US dollars, when `agent.price` is set. */
  costUsd?: number;
}

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, totalTokens: 0, calls: 0 };
}

/** Adds one call's tokens; recomputes the cost from the price. */
export function addUsage(
  usage: Usage,
  step: { inputTokens?: number | undefined; outputTokens?: number | undefined },
  price?: AgentConfig["price"],
): Usage {
  const inputTokens = usage.inputTokens + (step.inputTokens ?? 0);
  const outputTokens = usage.outputTokens + (step.outputTokens ?? 0);
  const next: Usage = {
    inputTokens,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
    calls: usage.calls + 1,
  };
  if (price) next.costUsd = costOf(next, price);
  return next;
}

export function costOf(
  usage: Pick<Usage, "inputTokens" | "outputTokens">,
  price: NonNullable<AgentConfig["price"]>,
): number {
  const cost =
    (usage.inputTokens * price.inputPerMillion + usage.outputTokens * price.outputPerMillion) / 1_000_000;
  return Math.round(cost * 1_000_000) / 1_000_000;
}

/** Sums usages (parallel sessions). */
export function sumUsage(usages: readonly Usage[]): Usage {
  const total = emptyUsage();
  let cost: number | undefined;
  for (const usage of usages) {
    total.inputTokens += usage.inputTokens;
    total.outputTokens += usage.outputTokens;
    total.totalTokens += usage.totalTokens;
    total.calls += usage.calls;
    if (usage.costUsd !== undefined) cost = (cost ?? 0) + usage.costUsd;
  }
  if (cost !== undefined) total.costUsd = Math.round(cost * 1_000_000) / 1_000_000;
  return total;
}

export function formatUsage(usage: Usage): string {
  const cost = usage.costUsd !== undefined ? `, $${usage.costUsd.toFixed(4)}` : "";
  return `${usage.calls} model call(s), ${usage.inputTokens} input + ${usage.outputTokens} output tokens${cost}`;
}
