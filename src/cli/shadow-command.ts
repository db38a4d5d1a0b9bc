import type { Command } from "commander";
import { gc, listBranches, openBranch, removeBranch, ShadowError } from "../shadow/index.js";
import { UsageError } from "./errors.js";
import { commandRoot, ROOT_OPTION_HELP } from "./root.js";
import { printJson } from "./shared.js";

interface RootFlags {
  root?: string;
}

/** A branch id given on the command line that does not exist is bad input (exit 2). */
function asUsageError(error: unknown): never {
  if (error instanceof ShadowError && error.code === "BRANCH_NOT_FOUND") throw new UsageError(error.message);
  throw error;
}

export function registerShadow(program: Command): void {
  const shadow = program
    .command("shadow")
    .description("the shadow branches (copy-on-write forks) of a workspace: list, diff, discard, gc");

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
    .description("unified diff from the user's folder to the branch (git apply accepts it)")
    .argument("<id>", "branch id (see `umbra shadow list`)")
    .option("--root <dir>", ROOT_OPTION_HELP)
    .action(async (id: string, flags: RootFlags) => {
      const root = await commandRoot(flags.root);
      const branch = await openBranch(root, id).catch(asUsageError);
      try {
        process.stdout.write(await branch.diff({ binary: true }));
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
