import { createHash } from "node:crypto";
import { type LanguageModel, type ModelMessage, streamText, type ToolSet, tool } from "ai";
import { hunkLines } from "../accept/describe.js";
import { rebaseBranch } from "../accept/rebase.js";
import type { AgentConfig } from "../config/config.js";
import { backoffMs, describeModelError, isRetryable, ModelTimeoutError } from "./providers.js";
import type { SessionWriter } from "./session.js";
import { ALL_TOOLS } from "./tools/index.js";
import type { AgentTool, ToolContext, ToolResult } from "./tools/types.js";
import { addUsage, emptyUsage, type Usage } from "./usage.js";

export type AgentLimits = Pick<
  AgentConfig,
  | "maxSteps"
  | "maxTimeMs"
  | "maxTokens"
  | "contextTokens"
  | "requestTimeoutMs"
  | "maxRetries"
  | "maxFixups"
  | "temperature"
  | "price"
  | "testCommand"
>;

/** What the loop reports as it goes (the CLI prints one line per tool call). */
export type AgentEvent =
  | { type: "text"; text: string }
  | { type: "step"; step: number }
  | { type: "tool-call"; step: number; id: string; name: string; input: unknown }
  | {
      type: "tool-result";
      step: number;
      id: string;
      name: string;
      ok: boolean;
      summary: string;
      output: string;
      /** Errors the call's change introduced (the lints after an edit), when linted. */
      lintErrors?: number;
    }
  | { type: "retry"; attempt: number; delayMs: number; reason: string }
  | { type: "notice"; message: string }
  | { type: "usage"; usage: Usage };

export type AgentStatus =
  | "done"
  | "max-steps"
  | "max-time"
  | "max-tokens"
  | "stuck"
  | "unresolved"
  | "model-error"
  | "cancelled";

export interface AgentOutcome {
  status: AgentStatus;
  /** Why the loop ended, in words. */
  message: string;
  /** The model's last text. */
  finalText: string;
  steps: number;
  usage: Usage;
  toolCalls: { name: string; input: unknown; ok: boolean }[];
}

export interface RunAgentOptions {
  task: string;
  model: LanguageModel;
  context: ToolContext;
  limits: AgentLimits;
  tools?: readonly AgentTool[];
  session?: SessionWriter;
  onEvent?: (event: AgentEvent) => void;
  signal?: AbortSignal;
  /** First retry delay; doubles each retry (default 1000 ms). */
  retryBaseMs?: number;
  /** The same call with the same result this many times: a nudge; `stopAfter` times: the loop stops. */
  stuck?: { nudgeAfter: number; stopAfter: number };
  /** Replaces the built-in system prompt. */
  system?: string;
  /** The clock (tests). */
  now?: () => number;
}

const KEEP_RECENT_TOOL_MESSAGES = 3;
const COMPACT_AT = 0.7;

export function systemPrompt(limits: Pick<AgentLimits, "testCommand">): string {
  return [
    "You are a careful software engineer working on a task in a codebase, through tools.",
    "You work in your own shadow branch of the user's folder: your edits and what your commands write stay in the branch; the user reviews the resulting diff and decides whether to apply it. Nothing you do touches the user's folder.",
    "Paths are relative to the workspace root. Commands (run_command) run sandboxed in your branch with the workspace root as working directory: no network beyond the sandbox's private loopback (127.0.0.1 works) unless the user approves it (assume it is denied), the rest of the file system read-only, git and editor settings protected.",
    "Work like this: find the relevant code (search_code, list_files, read_file, definition, references); make the smallest change that solves the task (edit for local changes, apply_patch for changes across files); read the lint feedback that follows every edit and fix what you broke; run the tests with run_command and fix failures.",
    limits.testCommand ? `The project's tests run with: ${limits.testCommand}` : "",
    "When the task is done and the tests pass, reply with a short summary of the change and call no tool.",
  ]
    .filter(Boolean)
    .join("\n");
}

function toolSetOf(tools: readonly AgentTool[]): ToolSet {
  const set: ToolSet = {};
  for (const entry of tools)
    set[entry.name] = tool({ description: entry.description, inputSchema: entry.schema });
  return set;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const object = value as Record<string, unknown>;
    return `{${Object.keys(object)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(object[key])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "undefined";
}

/** A rough token count of messages (4 characters a token). */
export function estimateTokens(messages: readonly ModelMessage[]): number {
  return Math.ceil(JSON.stringify(messages).length / 4);
}

/**
 * Replaces the output of all but the most recent tool results with a one-line stub; returns how many
 * were compacted. The model can call the tool again when it needs the output back.
 */
export function compactMessages(messages: ModelMessage[], keepRecent = KEEP_RECENT_TOOL_MESSAGES): number {
  const toolIndexes = messages.flatMap((message, i) => (message.role === "tool" ? [i] : []));
  let compacted = 0;
  for (const i of toolIndexes.slice(0, Math.max(0, toolIndexes.length - keepRecent))) {
    const message = messages[i];
    if (message?.role !== "tool") continue;
    message.content = message.content.map((part) => {
      if (part.type !== "tool-result" || part.output.type !== "text" || part.output.value.length <= 200)
        return part;
      if (part.output.value.startsWith("[output elided")) return part;
      compacted++;
      const first = part.output.value.split("\n")[0]?.slice(0, 120) ?? "";
      return {
        ...part,
        output: {
          type: "text",
          value: `[output elided to save context; call ${part.toolName} again if you need it] ${first}`,
        },
      };
    });
  }
  return compacted;
}

interface StepAnswer {
  text: string;
  calls: { id: string; name: string; input: unknown }[];
  inputTokens: number | undefined;
  outputTokens: number | undefined;
}

class Stop extends Error {
  constructor(
    readonly status: AgentStatus,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The agent loop: one model call per step (streamed), then the tools it asked for, until the model
 * answers without a tool call, or a limit, the stuck detector or the fix-up budget ends it.
 */
export async function runAgent(options: RunAgentOptions): Promise<AgentOutcome> {
  const { limits, context } = options;
  const tools = options.tools ?? ALL_TOOLS;
  const byName = new Map(tools.map((entry) => [entry.name, entry]));
  const toolSet = toolSetOf(tools);
  const now = options.now ?? Date.now;
  const started = now();
  const emit = (event: AgentEvent) => options.onEvent?.(event);
  const system = options.system ?? systemPrompt(limits);
  const stuck = options.stuck ?? { nudgeAfter: 3, stopAfter: 5 };
  const messages: ModelMessage[] = [{ role: "user", content: options.task }];
  // what every request carries besides the messages: the system prompt and the tool descriptions
  const fixedTokens = Math.ceil(
    (system.length + tools.reduce((n, entry) => n + entry.name.length + entry.description.length + 200, 0)) /
      4,
  );
  options.session?.write({ type: "message", role: "system", text: system });
  options.session?.write({ type: "message", role: "user", text: options.task });

  let usage = emptyUsage();
  let steps = 0;
  let finalText = "";
  let fixups = 0;
  let lastInputTokens = 0;
  let lastCommandFailed = false;
  const lintErrorsByFile = new Map<string, number>();
  const repeats = new Map<string, number>();
  const toolCalls: AgentOutcome["toolCalls"] = [];

  const notice = (message: string) => {
    emit({ type: "notice", message });
    options.session?.write({ type: "notice", message });
  };

  // The user keeps working: when they change files the agent changed, their edits are merged into the
  // branch (three ways; src/accept/rebase.ts) and the agent is told, once for each version.
  const drifted = new Set<string>();
  const userDrift = async (): Promise<string | undefined> => {
    const branch = options.context.branch;
    if (!branch) return undefined;
    const changed = await branch.userChanges().catch(() => [] as string[]);
    if (changed.every((path) => drifted.has(path))) return undefined;
    const rebase = await rebaseBranch(branch).catch(() => undefined);
    if (!rebase) return undefined;
    const conflicting = rebase.conflicts.filter(({ path }) => !drifted.has(path));
    for (const path of rebase.merged) drifted.delete(path);
    for (const { path } of conflicting) drifted.add(path);
    if (rebase.merged.length === 0 && conflicting.length === 0) return undefined;
    notice(
      `the user changed file(s) the agent is working on: merged ${rebase.merged.length} into the branch, ${conflicting.length} conflicting`,
    );
    const lines = [
      ...(rebase.merged.length
        ? [
            `Meanwhile the user changed ${rebase.merged.join(", ")} in their folder; umbra merged their edits into your branch. Read ${rebase.merged.length === 1 ? "it" : "them"} again before you edit further.`,
          ]
        : []),
      ...conflicting.map(
        ({ path, hunks }) =>
          `The user also changed ${path} where you did (${hunks.length ? hunks.map(hunkLines).join(", ") : "the whole file"}): your version stays in your branch, and accepting it will report the conflict to the user.`,
      ),
    ];
    return `\n\nNote: ${lines.join(" ")}`;
  };

  const callModel = async (): Promise<StepAnswer> => {
    for (let attempt = 0; ; attempt++) {
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort(
          new ModelTimeoutError(`the model did not answer within ${limits.requestTimeoutMs} ms`),
        );
      }, limits.requestTimeoutMs);
      const onAbort = () => controller.abort(options.signal?.reason);
      options.signal?.addEventListener("abort", onAbort, { once: true });
      try {
        const result = streamText({
          model: options.model,
          system,
          messages,
          tools: toolSet,
          toolChoice: "auto",
          maxRetries: 0,
          abortSignal: controller.signal,
          // errors arrive as stream parts and are handled below; the SDK's default prints them
          onError: () => undefined,
          ...(limits.temperature !== undefined ? { temperature: limits.temperature } : {}),
        });
        const answer: StepAnswer = { text: "", calls: [], inputTokens: undefined, outputTokens: undefined };
        for await (const part of result.fullStream) {
          if (part.type === "text-delta") {
            answer.text += part.text;
            emit({ type: "text", text: part.text });
          } else if (part.type === "tool-call") {
            answer.calls.push({ id: part.toolCallId, name: part.toolName, input: part.input });
          } else if (part.type === "finish-step") {
            answer.inputTokens = part.usage.inputTokens;
            answer.outputTokens = part.usage.outputTokens;
          } else if (part.type === "error") {
            throw part.error;
          } else if (part.type === "abort") {
            throw timedOut
              ? new ModelTimeoutError(`the model did not answer within ${limits.requestTimeoutMs} ms`)
              : new Stop("cancelled", "cancelled");
          }
        }
        return answer;
      } catch (caught) {
        let error = caught;
        if (timedOut && !(error instanceof ModelTimeoutError))
          error = new ModelTimeoutError(`the model did not answer within ${limits.requestTimeoutMs} ms`);
        if (error instanceof Stop) throw error;
        if (options.signal?.aborted) throw new Stop("cancelled", "cancelled");
        if (!isRetryable(error) || attempt >= limits.maxRetries) {
          throw new Stop(
            "model-error",
            `the model call failed${attempt > 0 ? ` after ${attempt + 1} attempts` : ""}: ${describeModelError(error)}`,
          );
        }
        const delayMs = backoffMs(attempt + 1, error, options.retryBaseMs ?? 1000);
        emit({ type: "retry", attempt: attempt + 1, delayMs, reason: describeModelError(error) });
        options.session?.write({
          type: "notice",
          message: `retry ${attempt + 1} in ${Math.round(delayMs)} ms: ${describeModelError(error)}`,
        });
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      } finally {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
      }
    }
  };

  const runTool = async (call: StepAnswer["calls"][number]): Promise<ToolResult> => {
    const entry = byName.get(call.name);
    if (!entry) {
      return {
        ok: false,
        output: `there is no tool ${call.name}; the tools are ${tools.map((t) => t.name).join(", ")}`,
        summary: "unknown tool",
      };
    }
    const parsed = entry.schema.safeParse(call.input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return {
        ok: false,
        output: `invalid input for ${call.name}: ${issue ? `${issue.path.join(".") || "input"}: ${issue.message}` : "?"}`,
        summary: "invalid input",
      };
    }
    try {
      return await entry.run(parsed.data, context);
    } catch (error) {
      return { ok: false, output: `${call.name} failed: ${(error as Error).message}`, summary: "failed" };
    }
  };

  const finish = (status: AgentStatus, message: string): AgentOutcome => ({
    status,
    message,
    finalText,
    steps,
    usage,
    toolCalls,
  });

  try {
    for (;;) {
      if (options.signal?.aborted) throw new Stop("cancelled", "cancelled");
      if (steps >= limits.maxSteps)
        throw new Stop("max-steps", `stopped after ${limits.maxSteps} steps (agent.maxSteps)`);
      if (now() - started > limits.maxTimeMs)
        throw new Stop(
          "max-time",
          `stopped after ${Math.round(limits.maxTimeMs / 1000)} s (agent.maxTimeMs)`,
        );
      if (usage.totalTokens >= limits.maxTokens)
        throw new Stop(
          "max-tokens",
          `stopped after ${usage.totalTokens} tokens (agent.maxTokens ${limits.maxTokens})`,
        );
      const size = Math.max(fixedTokens + estimateTokens(messages), lastInputTokens);
      if (size > limits.contextTokens * COMPACT_AT) {
        const compacted = compactMessages(messages);
        if (compacted > 0) {
          notice(
            `context near its limit (~${size} of ${limits.contextTokens} tokens): ${compacted} old tool output(s) elided`,
          );
          lastInputTokens = 0;
        }
      }

      steps++;
      emit({ type: "step", step: steps });
      const answer = await callModel();
      usage = addUsage(usage, answer, limits.price);
      lastInputTokens = answer.inputTokens ?? 0;
      emit({ type: "usage", usage });
      options.session?.write({
        type: "usage",
        step: steps,
        inputTokens: answer.inputTokens ?? 0,
        outputTokens: answer.outputTokens ?? 0,
        total: usage,
      });
      if (answer.text) {
        finalText = answer.text;
        options.session?.write({ type: "message", role: "assistant", text: answer.text });
      }
      messages.push({
        role: "assistant",
        content: [
          ...(answer.text ? [{ type: "text" as const, text: answer.text }] : []),
          ...answer.calls.map((call) => ({
            type: "tool-call" as const,
            toolCallId: call.id,
            toolName: call.name,
            input: call.input,
          })),
        ],
      });

      if (answer.calls.length === 0) {
        const lintErrors = [...lintErrorsByFile.values()].reduce((a, b) => a + b, 0);
        if (!lastCommandFailed && lintErrors === 0) return finish("done", "the agent finished");
        const problem = lastCommandFailed
          ? "the last command you ran failed"
          : `your changes still introduce ${lintErrors} lint error(s)`;
        if (fixups >= limits.maxFixups)
          return finish("unresolved", `the agent stopped while ${problem} (after ${fixups} fix-up round(s))`);
        fixups++;
        const nudge = `You are not done: ${problem}. Fix it, check again (lints, run the tests), then reply with a summary. (Fix-up round ${fixups} of ${limits.maxFixups}.)`;
        notice(`fix-up round ${fixups}: ${problem}`);
        messages.push({ role: "user", content: nudge });
        options.session?.write({ type: "message", role: "user", text: nudge });
        continue;
      }

      const results: { id: string; name: string; output: string }[] = [];
      let stopAfterThis: string | undefined;
      for (const call of answer.calls) {
        emit({ type: "tool-call", step: steps, id: call.id, name: call.name, input: call.input });
        options.session?.write({
          type: "tool-call",
          step: steps,
          id: call.id,
          name: call.name,
          input: call.input,
        });
        const result = await runTool(call);
        toolCalls.push({ name: call.name, input: call.input, ok: result.ok });
        if (result.commandFailed) lastCommandFailed = true;
        if (result.commandPassed) lastCommandFailed = false;
        if (result.lintErrors !== undefined) {
          if (call.name === "lints" && !(call.input as { path?: string })?.path) lintErrorsByFile.clear();
          for (const path of result.changed ?? [(call.input as { path?: string })?.path ?? "*"])
            lintErrorsByFile.set(path, result.lintErrors);
        }
        let output = result.output;
        const key = createHash("sha1")
          .update(`${call.name}\0${canonical(call.input)}\0${result.output}`)
          .digest("hex");
        const seen = (repeats.get(key) ?? 0) + 1;
        repeats.set(key, seen);
        if (seen >= stuck.stopAfter)
          stopAfterThis = `the same ${call.name} call returned the same result ${seen} times`;
        else if (seen >= stuck.nudgeAfter) {
          output += `\n\nNote: you have made this exact ${call.name} call ${seen} times and got the same result each time. Repeating it will not help: try something different.`;
          notice(`stuck? ${call.name} repeated ${seen} times with the same result: nudged`);
        }
        emit({
          type: "tool-result",
          step: steps,
          id: call.id,
          name: call.name,
          ok: result.ok,
          summary: result.summary,
          output,
          ...(result.lintErrors !== undefined ? { lintErrors: result.lintErrors } : {}),
        });
        options.session?.write({
          type: "tool-result",
          step: steps,
          id: call.id,
          name: call.name,
          ok: result.ok,
          output,
        });
        results.push({ id: call.id, name: call.name, output });
      }
      const last = results.at(-1);
      const drift = await userDrift();
      if (last && drift) last.output += drift;
      messages.push({
        role: "tool",
        content: results.map((r) => ({
          type: "tool-result" as const,
          toolCallId: r.id,
          toolName: r.name,
          output: { type: "text" as const, value: r.output },
        })),
      });
      if (stopAfterThis) throw new Stop("stuck", `stopped: the agent is stuck (${stopAfterThis})`);
    }
  } catch (error) {
    if (error instanceof Stop) return finish(error.status, error.message);
    throw error;
  }
}
