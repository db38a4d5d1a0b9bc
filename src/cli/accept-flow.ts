/**
 * Accepting a branch's recorded changes from the CLI (`umbra agent`, `umbra shadow apply`, `umbra
 * sessions apply`): optionally verified first in a fresh branch (lints and the test command), then
 * merged three ways into the user's folder (src/accept; the check is src/accept/verify.ts), reported one line per file, and followed by the
 * test command in the user's folder where the caller asks for it.
 */
import { createInterface } from "node:readline";
import { type AcceptReport, type AcceptRequest, acceptChanges, conflictLine } from "../accept/index.js";
import { type Verification, verifyAccept } from "../accept/verify.js";
import { runTests, type TestRun } from "../agent/apply.js";
import type { UmbraConfig } from "../config/config.js";
import { confirmTestCommand, testCommandConfirmed } from "../config/trust.js";
import { shownPath } from "../workspace/errors.js";

const write = (text: string) => void process.stderr.write(text);

export async function confirm(question: string): Promise<boolean> {
  return /^\s*y(es)?\s*$/i.test((await ask(question)) ?? "");
}

/** One answer from the terminal; undefined without one. */
export async function ask(question: string): Promise<string | undefined> {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return undefined;
  const reader = createInterface({ input: process.stdin, output: process.stderr });
  return new Promise((resolve) => {
    reader.question(question, (answer) => {
      reader.close();
      resolve(answer);
    });
  });
}

/**
 * The command to run after an accept: the user's own `agent.testCommand`, or the workspace's once the
 * user confirmed it for this repository (asked here on a terminal; said otherwise).
 */
export async function testCommandFor(
  root: string,
  config: UmbraConfig,
  options: { quiet?: boolean; env?: NodeJS.ProcessEnv; label?: string },
): Promise<string | undefined> {
  const own = config.agent.testCommand;
  const asked = config.agent.workspaceTestCommand;
  if (own || !asked) return own;
  const env = options.env ?? process.env;
  const label = options.label ?? "umbra";
  if (testCommandConfirmed(root, asked, env)) return asked;
  const question = `${label}: this repository's .umbra/config.json asks to run ${JSON.stringify(asked)} in your folder after applying. Run it, now and from now on in this repository? [y/N] `;
  if (!options.quiet && (await confirm(question))) {
    confirmTestCommand(root, asked, env);
    return asked;
  }
  if (!options.quiet)
    write(
      `${label}: not running the repository's test command ${JSON.stringify(asked)}: confirm it on a terminal, or pass --test-command\n`,
    );
  return undefined;
}

/** Prints an accept's report on stderr: refusals, conflicts per file and hunk, the summary line. */
function printAccept(label: string, report: AcceptReport): void {
  for (const { path, why } of report.refused)
    write(`${label}: refused ${shownPath(path)}: ${shownPath(why)}\n`);
  for (const conflict of report.conflicts)
    write(`${label}: conflict: ${shownPath(conflictLine(conflict))}\n`);
  write(`${label}: ${report.message}\n`);
}

export interface AcceptOutcome {
  accept: AcceptReport;
  verification?: Verification;
  tests?: TestRun;
}

/**
 * Accepts `changes` into the user's folder: verified first when asked (refused when the result would
 * not lint or pass), then merged; the test command runs in the folder afterwards when `testAfter`.
 */
export async function acceptFlow(
  request: AcceptRequest & { config: UmbraConfig },
  options: { label: string; verify?: boolean; testAfter?: boolean; quiet?: boolean; testCommand?: string },
): Promise<AcceptOutcome> {
  const env = request.env ?? process.env;
  if (options.verify) {
    const command =
      options.testCommand ?? (await testCommandFor(request.root, request.config, { ...options, env }));
    const verification = await verifyAccept(request, command);
    if (!verification.passed) {
      for (const problem of verification.problems) write(`${options.label}: verify: ${problem}\n`);
      const accept: AcceptReport = {
        written: false,
        applied: [],
        unchanged: [],
        conflicts: [],
        refused: [],
        planned: [],
        message: "not applied: the result does not pass verification; nothing was written",
      };
      write(`${options.label}: ${accept.message}\n`);
      return { accept, verification };
    }
    if (!options.quiet)
      write(`${options.label}: verified in a fresh branch${command ? ` (${command})` : ""}\n`);
  }
  const accept = await acceptChanges(request);
  if (!options.quiet) printAccept(options.label, accept);
  let tests: TestRun | undefined;
  const command =
    accept.written && options.testAfter
      ? (options.testCommand ?? (await testCommandFor(request.root, request.config, { ...options, env })))
      : undefined;
  if (command) {
    if (!options.quiet) write(`${options.label}: running the tests in your folder (sandboxed): ${command}\n`);
    tests = await runTests(request.root, command, request.config, {
      env,
      ...(options.quiet ? {} : { onOutput: (chunk: string) => write(chunk) }),
    });
    for (const { path, why, movedTo } of tests.refused)
      write(
        `${options.label}: refused ${shownPath(path)} (made by the tests): ${why}; moved to ${shownPath(movedTo)}\n`,
      );
  }
  return { accept, ...(tests ? { tests } : {}) };
}
