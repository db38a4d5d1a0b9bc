import type { Command } from "commander";
import { listSessions, readTranscript, SessionWriter, sessionsDir } from "../agent/session.js";
import { UsageError } from "./errors.js";
import { commandRoot, ROOT_OPTION_HELP } from "./root.js";
import { type ApplyFlags, applyAndReport, applyOptions, openIdleBranch } from "./shadow-command.js";
import { printJson } from "./shared.js";

interface SessionsFlags {
  root?: string;
  json?: boolean;
}

async function listAction(flags: SessionsFlags): Promise<void> {
  const root = await commandRoot(flags.root);
  const sessions = await listSessions(root);
  if (flags.json) {
    printJson(sessions);
    return;
  }
  if (sessions.length === 0) {
    process.stdout.write(`no agent sessions in ${root}\n`);
    return;
  }
  for (const s of sessions) {
    const tokens = s.usage ? `${s.usage.totalTokens} tokens` : "";
    const applied = s.applied === undefined ? "" : s.applied ? ", applied" : ", not applied";
    const task = s.task.length > 60 ? `${s.task.slice(0, 57)}...` : s.task;
    process.stdout.write(
      `${s.id}  ${s.status}${applied}  ${s.steps} steps, ${s.toolCalls} tool calls, ${tokens}  ${JSON.stringify(task)}\n`,
    );
  }
}

export function registerSessions(program: Command): void {
  const sessions = program
    .command("sessions")
    .description("the agent sessions of a workspace (transcripts in the data directory): list, apply");
  sessions
    .command("list", { isDefault: true })
    .description("list the sessions, newest first")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .option(
      "--json",
      "print [{id, task, model, startedAt, status, steps, toolCalls, changedFiles, applied, usage, file}]",
    )
    .action(listAction);
  applyOptions(
    sessions
      .command("apply")
      .description(
        "accept a session's changes later, without running the model again: merged three ways with your current files (as umbra shadow apply; exit 0 all applied, 1 conflicts, 2 bad input)",
      )
      .argument("<session>", "session id (see `umbra sessions`)")
      .option("--root <dir>", ROOT_OPTION_HELP),
  ).action(async (id: string, flags: ApplyFlags) => {
    const root = await commandRoot(flags.root);
    const records = await readTranscript(root, id);
    const start = records.find((record) => record.type === "session");
    const branchId = start?.type === "session" ? start.branch : undefined;
    if (!branchId) throw new UsageError(`session ${id} has no branch to apply`);
    const branch = await openIdleBranch(
      root,
      branchId,
      `the branch of session ${id} is gone (applied in full, discarded, or removed by gc after shadow.gcAfterHours)`,
    );
    const { accept } = await applyAndReport(root, branch, flags);
    // the session's list shows it applied (or not) from now on, as after `umbra agent`'s own accept
    new SessionWriter(id, sessionsDir(root)).write({
      type: "apply",
      applied: accept.written,
      message: accept.message,
    });
  });
}
