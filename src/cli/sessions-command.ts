import type { Command } from "commander";
import { listSessions } from "../agent/session.js";
import { commandRoot, ROOT_OPTION_HELP } from "./root.js";
import { printJson } from "./shared.js";

interface SessionsFlags {
  root?: string;
  json?: boolean;
}

export function registerSessions(program: Command): void {
  program
    .command("sessions")
    .description("list the agent sessions of a workspace (transcripts in the data directory), newest first")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .option(
      "--json",
      "print [{id, task, model, startedAt, status, steps, toolCalls, changedFiles, applied, usage, file}]",
    )
    .action(async (flags: SessionsFlags) => {
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
    });
}
