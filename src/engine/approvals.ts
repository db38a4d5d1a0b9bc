import { randomBytes } from "node:crypto";
import { saveNetworkRule } from "../config/network-rules.js";
import { workspaceId } from "../config/paths.js";
import { allowEntryFor, commandLine, type NetworkRequest } from "../sandbox/index.js";
import { shownPath } from "../workspace/errors.js";
import type { ApprovalItem, SavedRule } from "./api.js";
import { EngineError } from "./errors.js";
import type { EventLog } from "./events.js";

/**
 * The approvals queue: a network request of an agent session's command waits here, instead of being
 * denied, until the user answers it on the page (once, for this repository, or deny) or the session
 * stops (denied). So does one of an MCP or API client that cannot ask its own user, while a page is open
 * to answer it (for a bounded time). "For this repository" saves the command's allowCommands entry for
 * the workspace on the trusted side (src/config/network-rules.ts).
 */

export type Decision = "once" | "repository" | "deny";

/** What the page shows of a command's network request: the agent's words with their control characters escaped. */
export function shownRequest(request: NetworkRequest): Pick<ApprovalItem, "command" | "reason" | "rule"> {
  // a bidirectional override cannot make the page show another command than the one that runs; a rule
  // holding a control character is not offered
  const rule = allowEntryFor(request);
  return {
    command: shownPath(commandLine(request)),
    reason: shownPath(request.reason ?? ""),
    rule: shownPath(rule) === rule ? rule : "",
  };
}

interface Pending {
  item: ApprovalItem;
  resolve: (approved: boolean) => void;
  /** Denies it when the wait has a bound and it passes. */
  expiry?: NodeJS.Timeout;
}

export class ApprovalQueue {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly events: EventLog,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /**
   * Queues a request; resolves true when the user approves it, false when denied, dropped or (given
   * `timeoutMs`) not answered in that time.
   */
  ask(request: Omit<ApprovalItem, "id" | "askedAt" | "workspace">, timeoutMs?: number): Promise<boolean> {
    const item: ApprovalItem = {
      ...request,
      id: randomBytes(8).toString("hex"),
      workspace: workspaceId(request.root),
      askedAt: new Date().toISOString(),
    };
    return new Promise((resolve) => {
      const entry: Pending = { item, resolve };
      this.pending.set(item.id, entry);
      this.publish(item, { state: "queued", command: item.command, reason: item.reason, rule: item.rule });
      if (timeoutMs === undefined) return;
      entry.expiry = setTimeout(() => this.settle(entry, false, "expired"), timeoutMs);
      entry.expiry.unref();
    });
  }

  list(): ApprovalItem[] {
    return [...this.pending.values()].map((entry) => entry.item);
  }

  /** How many requests of `session` wait. */
  waiting(session: string): number {
    return this.list().filter((item) => item.session === session).length;
  }

  /** The user's answer; a NOT_FOUND EngineError when no such request waits (answered, or dropped). */
  answer(id: string, decision: Decision): { approval: string; decision: Decision; rule?: SavedRule } {
    const entry = this.pending.get(id);
    if (!entry)
      throw new EngineError(
        "NOT_FOUND",
        `no waiting approval ${JSON.stringify(id)} (GET /api/approvals lists them)`,
      );
    const { item } = entry;
    let rule: SavedRule | undefined;
    if (decision === "repository" && !item.rule)
      throw new EngineError(
        "BAD_REQUEST",
        "this command holds control characters: no rule is saved for it (approve it once, or deny)",
      );
    if (decision === "repository") {
      const saved = saveNetworkRule(item.root, item.rule, this.env);
      rule = { ...saved, root: item.root, workspace: item.workspace };
    }
    this.settle(entry, decision !== "deny", decision);
    return { approval: id, decision, ...(rule ? { rule } : {}) };
  }

  /** Denies every request of `session` (it stopped or ended). */
  drop(session: string): void {
    for (const entry of [...this.pending.values()])
      if (entry.item.session === session) this.settle(entry, false, "dropped");
  }

  private settle(entry: Pending, approved: boolean, decision: Decision | "dropped" | "expired"): void {
    if (!this.pending.delete(entry.item.id)) return;
    clearTimeout(entry.expiry);
    this.publish(entry.item, { state: "answered", decision });
    entry.resolve(approved);
  }

  private publish(item: ApprovalItem, fields: Record<string, unknown>): void {
    this.events.publish({
      type: "approval",
      workspace: item.workspace,
      session: item.session,
      approval: item.id,
      branch: item.branch,
      ...fields,
    });
  }
}
