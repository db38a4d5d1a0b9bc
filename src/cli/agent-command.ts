import type { Command } from "commander";
import type { AcceptReport } from "../accept/index.js";
import type { TestRun } from "../agent/apply.js";
import type { AgentEvent } from "../agent/loop.js";
import { runSession, type SessionOptions, type SessionResult } from "../agent/run.js";
import { readTranscript, SessionWriter, sessionsDir } from "../agent/session.js";
import { formatUsage, sumUsage } from "../agent/usage.js";
import type { UmbraConfig } from "../config/config.js";
import { networkAllowlist } from "../config/network-rules.js";
import {
  type Approver,
  allowlistApprover,
  alwaysApprove,
  firstApproving,
  terminalApprover,
} from "../sandbox/index.js";
import { type RecordedChange, removeBranch } from "../shadow/index.js";
import { shownPath } from "../workspace/errors.js";
import { acceptFlow, ask } from "./accept-flow.js";
import { UsageError } from "./errors.js";
import { pickChanges } from "./pick.js";
import { commandRoot, ROOT_OPTION_HELP } from "./root.js";
import { configFor, printJson } from "./shared.js";

interface AgentFlags {
  root?: string;
  yes?: boolean;
  json?: boolean;
  parallel?: string;
  record?: string;
  replay?: string;
  strict?: boolean;
  testCommand?: string;
  net?: boolean;
  resume?: string;
}

/** The agent did not finish its work, a conflict kept the diff out, or the tests failed: exit 1. */
class AgentFailedError extends Error {
  override name = "AgentFailedError";
}

const write = (text: string) => void process.stderr.write(text);

/** One short line for a tool call's input. */
export function describeInput(name: string, input: unknown): string {
  const value = (input ?? {}) as Record<string, unknown>;
  const str = (key: string) => (typeof value[key] === "string" ? (value[key] as string) : undefined);
  let text: string;
  if (name === "read_file")
    text = `${str("path") ?? "?"}${value.startLine ? `:${value.startLine}-${value.endLine ?? ""}` : ""}`;
  else if (name === "search_code") text = JSON.stringify(str("query") ?? "");
  else if (name === "run_command") text = str("command") ?? "";
  else if (name === "apply_patch") text = `${(str("patch") ?? "").split("\n").length} lines`;
  else if (name === "definition" || name === "references")
    text = `${str("path") ?? "?"}:${value.line ?? "?"} ${str("symbol") ?? ""}`.trim();
  else text = str("path") ?? JSON.stringify(input);
  return text.length > 100 ? `${text.slice(0, 97)}...` : text;
}

/** Progress on stderr: one line per tool call, the model's text dimmed, retries and notices. */
export function progressPrinter(prefix = ""): (event: AgentEvent) => void {
  const pending = new Map<string, string>();
  let inText = false;
  const endText = () => {
    if (inText) write("\n");
    inText = false;
  };
  return (event) => {
    if (event.type === "text") {
      if (!inText) write(`${prefix}  `);
      inText = true;
      write(event.text.replace(/\n/g, `\n${prefix}  `));
    } else if (event.type === "tool-call") {
      endText();
      pending.set(event.id, `${event.name} ${describeInput(event.name, event.input)}`);
    } else if (event.type === "tool-result") {
      // one line each: a name holding a newline or an escape cannot fake a line
      const call = shownPath(pending.get(event.id) ?? event.name);
      write(`${prefix}${event.ok ? "✓" : "✗"} ${call} — ${shownPath(event.summary)}\n`);
    } else if (event.type === "retry") {
      endText();
      write(
        `${prefix}… model call failed (${event.reason}); retry ${event.attempt} in ${(event.delayMs / 1000).toFixed(1)} s\n`,
      );
    } else if (event.type === "notice") {
      endText();
      write(`${prefix}! ${event.message}\n`);
    } else if (event.type === "step") endText();
  };
}

function approverFor(flags: AgentFlags, root: string, config: UmbraConfig): Approver {
  if (flags.net && flags.yes) return alwaysApprove();
  // the user's config and the rules they saved for this repository (the web page's approvals queue)
  const allow = allowlistApprover(networkAllowlist(root, config));
  return flags.net ? firstApproving(allow, terminalApprover()) : allow;
}

export interface ApplyReport {
  apply: AcceptReport;
  tests: TestRun | undefined;
}

/**
 * Accepts a session's changes (or the ones picked of them) into the user's folder, merged three ways
 * with what the user changed meanwhile, and runs the test command there (sandboxed). The session's
 * branch goes once all of it is in; otherwise it stays for a later `umbra sessions apply`.
 */
export async function applyAndTest(
  root: string,
  result: Pick<SessionResult, "session" | "branch" | "changes">,
  config: UmbraConfig,
  options: { quiet?: boolean; env?: NodeJS.ProcessEnv; changes?: RecordedChange[] } = {},
): Promise<ApplyReport> {
  const changes = options.changes ?? result.changes;
  const outcome = await acceptFlow(
    { root, changes, config, ...(options.env ? { env: options.env } : {}) },
    { label: "umbra agent", testAfter: true, ...(options.quiet ? { quiet: true } : {}) },
  );
  const apply = outcome.accept;
  const tests = outcome.tests;
  const session = new SessionWriter(result.session, sessionsDir(root, options.env));
  session.write({
    type: "apply",
    applied: apply.written,
    message: apply.message,
    ...(tests ? { tests: { command: tests.command, passed: tests.passed, exitCode: tests.exitCode } } : {}),
  });
  const complete = changes === result.changes && apply.conflicts.length === 0 && apply.refused.length === 0;
  if (complete)
    await removeBranch(root, result.branch, options.env ? { env: options.env } : {}).catch(() => {});
  return { apply, tests };
}

/**
 * What to accept of a session's changes: all of them with --yes; else asked on the terminal (all, none,
 * or picked per file and hunk). Undefined: nothing now (said, with how to accept later).
 */
async function reviewChanges(
  result: SessionResult,
  flags: AgentFlags,
  who: string,
): Promise<RecordedChange[] | undefined> {
  if (flags.yes) return result.changes;
  const answer = flags.json
    ? undefined
    : await ask(
        `umbra agent: apply the changes of ${who} to your folder? [y]es, [n]o, [p]ick files and hunks `,
      );
  const choice = answer?.trim().toLowerCase() ?? "";
  if (choice.startsWith("y")) return result.changes;
  if (choice.startsWith("p")) {
    const picked = await pickChanges(result.changes, ask, (text) => process.stdout.write(text));
    if (picked.length > 0) return picked;
  }
  write(
    `umbra agent: not applied; accept it later with: umbra sessions apply ${result.session} (its branch ${result.branch} is kept for shadow.gcAfterHours)\n`,
  );
  return undefined;
}

function testsJson(tests: TestRun | undefined) {
  return tests
    ? {
        command: tests.command,
        passed: tests.passed,
        exitCode: tests.exitCode,
        timedOut: tests.timedOut,
        output: tests.output,
      }
    : null;
}

export function registerAgent(program: Command): void {
  program
    .command("agent")
    .description(
      "run a coding agent on TASK in its own shadow branch, show its diff, and apply it to your folder when accepted (then run agent.testCommand)",
    )
    .argument("[task...]", "what the agent should do (with --resume: optional, a further instruction)")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .option("--yes", "apply the diff without asking (with --net: also approve network access)")
    .option("--json", "print {session, diff, applied, tests, usage, status, message} instead of the diff")
    .option(
      "--parallel <n>",
      "run N agents at once, each in its own branch, and print each diff (nothing is applied)",
    )
    .option("--record <file>", "write every model exchange to this cassette (JSON lines)")
    .option("--replay <file>", "answer every model request from this cassette: no model is called")
    .option("--strict", "with --replay: fail when a request differs from the recording (default: warn)")
    .option("--test-command <cmd>", "the command that runs the tests (overrides agent.testCommand)")
    .option("--net", "let the agent ask for network access for its commands (asked on the terminal)")
    .option("--resume <session>", "continue an earlier session (see umbra sessions) from where it stopped")
    .action(async (words: string[], flags: AgentFlags) => {
      const task = words.join(" ").trim();
      if (!task && !flags.resume) throw new UsageError("give the task (or --resume SESSION)");
      if (flags.record && flags.replay) throw new UsageError("--record and --replay exclude each other");
      if (flags.strict && !flags.replay) throw new UsageError("--strict goes with --replay");
      const parallel = flags.parallel === undefined ? 1 : Number(flags.parallel);
      if (!Number.isInteger(parallel) || parallel < 1 || parallel > 16)
        throw new UsageError(`--parallel must be a whole number from 1 to 16, not ${flags.parallel}`);
      if (parallel > 1 && (flags.record || flags.replay || flags.resume))
        throw new UsageError("--record, --replay and --resume work with one agent, not with --parallel");
      const root = await commandRoot(flags.root);
      // An unknown session is bad input, whatever else is wrong.
      if (flags.resume) await readTranscript(root, flags.resume);
      const loaded = configFor(root);
      const config: UmbraConfig = flags.testCommand
        ? { ...loaded, agent: { ...loaded.agent, testCommand: flags.testCommand } }
        : loaded;
      const controller = new AbortController();
      const interrupt = () => {
        write("\numbra agent: stopping (Ctrl-C again to quit now)\n");
        controller.abort();
        process.once("SIGINT", () => process.exit(130));
      };
      process.once("SIGINT", interrupt);
      const base: Omit<SessionOptions, "onEvent"> = {
        root,
        task,
        config,
        approver: approverFor(flags, root, config),
        signal: controller.signal,
        onWarning: (message) => write(`umbra: ${message}\n`),
        ...(flags.record ? { record: flags.record } : {}),
        ...(flags.replay ? { replay: flags.replay } : {}),
        ...(flags.strict ? { strict: true } : {}),
        ...(flags.resume ? { resume: flags.resume } : {}),
      };
      try {
        if (parallel > 1) {
          write(`umbra agent: ${parallel} agents, each in its own branch\n`);
          const results = await Promise.all(
            Array.from({ length: parallel }, (_, i) =>
              runSession({ ...base, onEvent: progressPrinter(`[${i + 1}] `) }),
            ),
          );
          const usage = sumUsage(results.map((r) => r.outcome.usage));
          if (!flags.json)
            results.forEach((r, i) => {
              process.stdout.write(
                `\n=== agent ${i + 1}: session ${r.session}: ${r.outcome.message}\n${r.diff || "(no changes)\n"}`,
              );
            });
          // one after the other, each merged three ways with the folder as the ones before left it:
          // two agents that changed the same lines give a conflict, never the last one's version
          const reports: (ApplyReport | undefined)[] = [];
          for (const [i, r] of results.entries()) {
            const picked = r.changes.length ? await reviewChanges(r, flags, `agent ${i + 1}`) : undefined;
            reports.push(
              picked
                ? await applyAndTest(root, r, config, { quiet: Boolean(flags.json), changes: picked })
                : undefined,
            );
          }
          if (flags.json) {
            printJson({
              sessions: results.map((r, i) => ({
                session: r.session,
                branch: r.branch,
                status: r.outcome.status,
                message: r.outcome.message,
                diff: r.diff,
                applied: reports[i]?.apply.written ?? false,
                conflicts: reports[i]?.apply.conflicts ?? [],
                refused: reports[i]?.apply.refused ?? [],
                tests: testsJson(reports[i]?.tests),
                usage: r.outcome.usage,
              })),
              applied: reports.some((report) => report?.apply.written),
              usage,
            });
          } else write(`umbra agent: ${formatUsage(usage)}\n`);
          if (results.every((r) => r.outcome.status !== "done"))
            throw new AgentFailedError("no agent finished its task");
          const failed = reports.find((r) => r && (!r.apply.written || r.apply.conflicts.length > 0));
          if (failed) throw new AgentFailedError(failed.apply.message);
          const broke = reports.find((r) => r?.tests && !r.tests.passed);
          if (broke?.tests)
            throw new AgentFailedError(`the tests failed after applying (${broke.tests.command})`);
          return;
        }

        if (flags.replay)
          write(`umbra agent: replaying the model's answers from ${flags.replay} (no model is called)\n`);
        const result = await runSession({ ...base, onEvent: progressPrinter() });
        for (const drift of result.drifts) if (!flags.json) write(`umbra agent: replay drift: ${drift}\n`);
        write(
          `umbra agent: ${result.outcome.message}; ${formatUsage(result.outcome.usage)}; session ${result.session}\n`,
        );
        let report: ApplyReport | undefined;
        if (!flags.json) process.stdout.write(result.diff ? `\n${result.diff}` : "\n(no changes)\n");
        if (result.changes.length > 0) {
          const picked = await reviewChanges(result, flags, "the agent");
          if (picked) {
            report = await applyAndTest(root, result, config, {
              quiet: Boolean(flags.json),
              changes: picked,
            });
            if (report.tests)
              write(
                `umbra agent: tests ${report.tests.passed ? "passed" : "FAILED"} (${report.tests.command})\n`,
              );
          }
        }
        if (flags.json) {
          printJson({
            session: result.session,
            status: result.outcome.status,
            message: result.outcome.message,
            diff: result.diff,
            branch: result.branch,
            applied: report?.apply.written ?? false,
            conflicts: report?.apply.conflicts ?? [],
            refused: report?.apply.refused ?? [],
            tests: testsJson(report?.tests),
            usage: result.outcome.usage,
          });
        }
        if (result.outcome.status !== "done") throw new AgentFailedError(result.outcome.message);
        if (report && (!report.apply.written || report.apply.conflicts.length > 0))
          throw new AgentFailedError(report.apply.message);
        if (report?.tests && !report.tests.passed)
          throw new AgentFailedError(`the tests failed after applying (${report.tests.command})`);
      } finally {
        process.removeListener("SIGINT", interrupt);
      }
    });
}
