import type { Command } from "commander";
import { AcceptError, conflictLine, type Resolution, rebaseBranch } from "../accept/index.js";
import { type Branch, gc, listBranches, openBranch, removeBranch, ShadowError } from "../shadow/index.js";
import { shownPath } from "../workspace/errors.js";
import { type AcceptOutcome, acceptFlow } from "./accept-flow.js";
import { UsageError } from "./errors.js";
import { commandRoot, ROOT_OPTION_HELP } from "./root.js";
import { configFor, printJson } from "./shared.js";

interface RootFlags {
  root?: string;
}

export interface ApplyFlags extends RootFlags {
  file: string[];
  hunk: string[];
  ours: string[];
  theirs: string[];
  markers: string[];
  partial?: boolean;
  verify?: boolean;
  keep?: boolean;
  json?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** The options of `umbra shadow apply` and `umbra sessions apply`. */
export function applyOptions(command: Command): Command {
  return command
    .option("--file <path>", "only this file (repeat for more)", collect, [])
    .option(
      "--hunk <n>",
      "with one --file: only this hunk of it, numbered as in its diff (repeat)",
      collect,
      [],
    )
    .option("--ours <path>", "on conflicts in this file keep your lines (repeat)", collect, [])
    .option("--theirs <path>", "on conflicts in this file take the agent's lines (repeat)", collect, [])
    .option(
      "--markers <path>",
      "write this file with conflict markers where it conflicts (repeat)",
      collect,
      [],
    )
    .option("--partial", "write the files that merge cleanly even when others conflict")
    .option(
      "--verify",
      "first build the result in a fresh branch and run the lints and the test command there",
    )
    .option("--keep", "keep the branch after it was applied in full (default: it is discarded)")
    .option(
      "--json",
      "print {written, applied, unchanged, conflicts, refused, planned, message, verification}",
    );
}

/**
 * Applies `branch` with the flags, prints the outcome, sets the exit status (1 unless all of it was
 * written), discards the branch once all of it is in the folder (unless --keep or a --file choice), and
 * returns the outcome.
 */
export async function applyAndReport(
  root: string,
  branch: Branch,
  flags: ApplyFlags,
): Promise<AcceptOutcome> {
  try {
    const outcome = await applyBranch(root, branch, flags);
    if (flags.json) printJson({ ...outcome.accept, verification: outcome.verification ?? null });
    if (!appliedAll(outcome)) process.exitCode = 1;
    else if (!flags.keep && flags.file.length === 0) {
      await branch.discard();
      if (!flags.json) process.stderr.write(`umbra: discarded branch ${branch.id}\n`);
    }
    return outcome;
  } finally {
    if (!branch.isDiscarded) await branch.close();
  }
}

/** --ours/--theirs/--markers as one choice per file; a file named twice is bad input. */
function resolutions(flags: ApplyFlags): Map<string, Resolution> {
  const out = new Map<string, Resolution>();
  const choices: [Resolution, string[]][] = [
    ["ours", flags.ours],
    ["theirs", flags.theirs],
    ["markers", flags.markers],
  ];
  for (const [choice, paths] of choices)
    for (const path of paths) {
      if (out.has(path))
        throw new UsageError(`${path} is given more than one of --ours, --theirs, --markers`);
      out.set(path, choice);
    }
  return out;
}

/**
 * Opens a branch to accept or rebase it: refused while another live process owns it (an agent session
 * still working there: accepting would take its work half done, and discard it under it).
 */
export async function openIdleBranch(root: string, id: string, missing?: string): Promise<Branch> {
  const info = (await listBranches(root)).find((branch) => branch.id === id);
  if (!info && missing) throw new UsageError(missing);
  if (info?.ownerAlive && info.ownerPid !== process.pid)
    throw new UsageError(
      `branch ${id} is in use by process ${info.ownerPid} (an agent session or command still working in it); try again when it has finished`,
    );
  return openBranch(root, id).catch(asUsageError);
}

/** Accepts a branch (or part of it) into `root` with the flags of `shadow apply` / `sessions apply`. */
async function applyBranch(root: string, branch: Branch, flags: ApplyFlags): Promise<AcceptOutcome> {
  const hunks = flags.hunk.map((value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1)
      throw new UsageError(`--hunk takes a hunk number (1, 2, ...), not ${value}`);
    return n;
  });
  if (hunks.length > 0 && flags.file.length !== 1)
    throw new UsageError("--hunk goes with exactly one --file");
  const config = configFor(root);
  const changes = await branch.recordedChanges();
  const select =
    flags.file.length > 0 ? { files: flags.file, ...(hunks.length ? { hunks } : {}) } : undefined;
  try {
    return await acceptFlow(
      {
        root,
        changes,
        config,
        resolve: resolutions(flags),
        allOrNothing: !flags.partial,
        ...(select ? { select } : {}),
      },
      { label: "umbra", ...(flags.verify ? { verify: true } : {}), ...(flags.json ? { quiet: true } : {}) },
    );
  } catch (error) {
    if (error instanceof AcceptError && error.code === "USAGE") throw new UsageError(error.message);
    throw error;
  }
}

/** Whether everything asked for was written: no conflict, no refusal, verification passed. */
function appliedAll(outcome: AcceptOutcome): boolean {
  const { accept, verification } = outcome;
  if (verification && !verification.passed) return false;
  return accept.conflicts.length === 0 && accept.refused.length === 0;
}

/** A branch id given on the command line that does not exist is bad input (exit 2). */
function asUsageError(error: unknown): never {
  if (error instanceof ShadowError && error.code === "BRANCH_NOT_FOUND") throw new UsageError(error.message);
  throw error;
}

export function registerShadow(program: Command): void {
  const shadow = program
    .command("shadow")
    .description(
      "the shadow branches (copy-on-write forks) of a workspace: list, diff, apply, rebase, discard, gc",
    );

  shadow
    .command("list")
    .description("branches of the workspace with their mode, age and owner")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .option("--json", "print a JSON array")
    .action(async (flags: RootFlags & { json?: boolean }) => {
      const root = await commandRoot(flags.root);
      const branches = await listBranches(root);
      if (flags.json) return printJson(branches);
      if (branches.length === 0) return void process.stdout.write(`no branches of ${root}\n`);
      for (const branch of branches) {
        const owner = branch.ownerAlive ? `owner pid ${branch.ownerPid}` : "owner gone";
        const problem = branch.problem ? `  (${branch.problem})` : "";
        process.stdout.write(
          `${branch.id}  ${branch.mode ?? "?"}  ${branch.createdAt ?? "?"}  ${owner}${problem}\n`,
        );
      }
    });

  shadow
    .command("diff")
    .description(
      "what the branch did: a unified diff from each changed file's recorded base to the branch (git apply accepts it)",
    )
    .argument("<id>", "branch id (see `umbra shadow list`)")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .action(async (id: string, flags: RootFlags) => {
      const root = await commandRoot(flags.root);
      const branch = await openBranch(root, id).catch(asUsageError);
      try {
        const changes = await branch.recordedChanges();
        process.stdout.write(await branch.diff({ binary: true }, changes));
        for (const change of changes)
          if (change.base.kind === "unknown")
            process.stderr.write(
              `umbra: left out of the diff: ${shownPath(change.path)}: ${change.base.why} (umbra shadow apply reports it as a conflict)\n`,
            );
      } finally {
        await branch.close();
      }
    });

  applyOptions(
    shadow
      .command("apply")
      .description(
        "accept a branch into your folder: what the branch did (base -> branch) merged three ways with your current files; exit 0 when all of it was applied, 1 on conflicts or refusals (nothing written for those files; all or nothing unless --partial), 2 on bad input",
      )
      .argument("<id>", "branch id (see `umbra shadow list`)")
      .option("--root <dir>", ROOT_OPTION_HELP),
  ).action(async (id: string, flags: ApplyFlags) => {
    const root = await commandRoot(flags.root);
    await applyAndReport(root, await openIdleBranch(root, id), flags);
  });

  shadow
    .command("rebase")
    .description(
      "bring your current folder into a branch: each file it changed that you changed too is merged three ways into it (conflicts listed, exit 1)",
    )
    .argument("<id>", "branch id (see `umbra shadow list`)")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .option("--json", "print {merged, current, conflicts}")
    .action(async (id: string, flags: RootFlags & { json?: boolean }) => {
      const root = await commandRoot(flags.root);
      const branch = await openIdleBranch(root, id);
      try {
        const report = await rebaseBranch(branch);
        if (flags.json) printJson(report);
        else {
          for (const path of report.merged) process.stdout.write(`merged ${shownPath(path)}\n`);
          for (const conflict of report.conflicts)
            process.stdout.write(`conflict: ${shownPath(conflictLine(conflict))}\n`);
          process.stdout.write(
            `rebased branch ${id}: ${report.merged.length} file(s) merged, ${report.conflicts.length} conflicting, ${report.current.length} already current\n`,
          );
        }
        if (report.conflicts.length > 0) process.exitCode = 1;
      } finally {
        await branch.close();
      }
    });

  shadow
    .command("discard")
    .description("delete branches and everything written in them")
    .argument("[ids...]", "branch ids")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .option("--stale", "every branch whose owner process is gone, whatever its age")
    .action(async (ids: string[], flags: RootFlags & { stale?: boolean }) => {
      const root = await commandRoot(flags.root);
      if (ids.length === 0 && !flags.stale) throw new UsageError("give branch ids or --stale");
      // Every id must name a branch before any is removed: a typo discards nothing and says so.
      const removed = [...new Set(ids)];
      const known = new Set((await listBranches(root)).map((branch) => branch.id));
      const unknown = removed.filter((id) => !known.has(id));
      if (unknown.length > 0)
        throw new UsageError(`no branch ${unknown.join(", ")} in ${root} (see umbra shadow list)`);
      for (const id of removed) await removeBranch(root, id).catch(asUsageError);
      if (flags.stale) removed.push(...(await gc(root, { maxAgeHours: 0 })).removed);
      process.stdout.write(
        `discarded ${removed.length} branch(es)${removed.length ? `: ${removed.join(", ")}` : ""}\n`,
      );
    });

  shadow
    .command("gc")
    .description("remove branches whose owner is gone and that are older than shadow.gcAfterHours")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .action(async (flags: RootFlags) => {
      const root = await commandRoot(flags.root);
      const result = await gc(root);
      for (const problem of result.problems) process.stderr.write(`umbra: ${problem}\n`);
      process.stdout.write(`removed ${result.removed.length} branch(es), kept ${result.kept.length}\n`);
    });
}
