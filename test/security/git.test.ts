/**
 * Security probes, class "git": a command sandboxed in the user's folder (as `umbra run` runs it: the
 * real folder bound read-write) tries to plant code that the user's own git runs later. Each probe runs
 * the attack through the sandbox's entry point (openSandbox: the product's policy, the real helper, then
 * the after-run check, checkGitAfterRun), then the user's real `git status` and `git commit` outside
 * the sandbox, and asserts that the planted program never ran (its marker file does not exist).
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runTests } from "../../src/agent/apply.js";
import { loadConfig } from "../../src/config/config.js";
import { checkGitAfterRun, type GitCheck } from "../../src/sandbox/git-guard.js";
import { openSandbox } from "../../src/sandbox/sandbox.js";
import type { SandboxResult } from "../../src/sandbox/types.js";
import { requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { ensureHelper, userEnv } from "../sandbox/helpers.js";

let base: string;
let ws: string;
let marker: string;
let env: NodeJS.ProcessEnv;
let savedHome: string | undefined;

/** The environment of "the user": a home of its own, no system git config. */
function gitUserEnv(): NodeJS.ProcessEnv {
  return {
    ...userEnv(base),
    GIT_AUTHOR_NAME: "u",
    GIT_AUTHOR_EMAIL: "u@u",
    GIT_COMMITTER_NAME: "u",
    GIT_COMMITTER_EMAIL: "u@u",
  };
}

/** The user's own git, outside the sandbox. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** The user's git as a shell prompt or a commit would run it; failures are fine, code must not run. */
function userGitEverywhere(...dirs: string[]): void {
  for (const dir of [ws, ...dirs]) {
    for (const args of [["status"], ["commit", "-q", "--allow-empty", "-m", "user commit"]]) {
      try {
        git(dir, ...args);
      } catch {
        // refused or broken is not run
      }
    }
  }
}

function initRepo(dir: string): void {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, "a.txt"), "a\n");
  git(dir, "add", "a.txt");
  git(dir, "commit", "-q", "-m", "base");
}

const evilConfig = () => `[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = touch ${marker}\\n`;

/** The workspace's sandbox, opened as `umbra run` opens it (its run is followed by the after-run check). */
function openWorkspaceSandbox() {
  return openSandbox({ workspace: ws, config: loadConfig({ workspaceRoot: ws, env }), env });
}

/** Runs `script` sandboxed in the workspace as `umbra run` does, then the after-run check. */
async function attack(script: string): Promise<{ result: SandboxResult; check: GitCheck }> {
  const sandbox = await openWorkspaceSandbox();
  expect(sandbox.git).toBeDefined();
  const result = await sandbox.run("sh", ["-c", script], { cwd: ws });
  return { result, check: result.git ?? { refused: [], warnings: [] } };
}

beforeAll(() => {
  ensureHelper();
  savedHome = process.env.UMBRA_HOME;
});
afterAll(() => {
  if (savedHome === undefined) delete process.env.UMBRA_HOME;
  else process.env.UMBRA_HOME = savedHome;
});

beforeEach(async () => {
  // Outside the OS temp folder: the sandbox's /tmp is private.
  base = realpathSync(await mkdtemp("/var/tmp/umbra-git-"));
  ws = join(base, "ws");
  marker = join(base, "PWNED");
  mkdirSync(join(base, "home"), { recursive: true });
  env = gitUserEnv();
  process.env.UMBRA_HOME = env.UMBRA_HOME; // the helper's placeholder journal
});
afterEach(async () => {
  expect(existsSync(marker)).toBe(false);
  await rm(base, { recursive: true, force: true });
});

describe("git: a command cannot plant code that the user's git runs", () => {
  it("git config core.fsmonitor: .git/config stays read-only", async () => {
    initRepo(ws);
    await attack(
      `git config core.fsmonitor "touch ${marker}"; echo '[core] fsmonitor = touch ${marker}' >> .git/config`,
    );
    userGitEverywhere();
  });

  it(".git/commondir pointing to a planted common directory is moved out", async () => {
    initRepo(ws);
    const { check } = await attack(
      `mkdir planted && cp -r .git/objects .git/refs .git/HEAD planted/ && printf '${evilConfig()}' > planted/config && echo "$PWD/planted" > .git/commondir`,
    );
    expect(check.refused.map((r) => r.path)).toContain(".git/commondir");
    expect(existsSync(join(ws, ".git", "commondir"))).toBe(false);
    userGitEverywhere();
    // git still works, with the user's own configuration
    expect(git(ws, "log", "--format=%s")).toContain("base");
  });

  it(".git/config.worktree (with extensions.worktreeConfig set by the user) is moved out", async () => {
    initRepo(ws);
    git(ws, "config", "extensions.worktreeConfig", "true");
    const { check } = await attack(`printf '${evilConfig()}' > .git/config.worktree`);
    expect(check.refused.map((r) => r.path)).toContain(".git/config.worktree");
    userGitEverywhere();
  });

  it("an existing .git/config.worktree stays read-only", async () => {
    initRepo(ws);
    git(ws, "config", "extensions.worktreeConfig", "true");
    writeFileSync(join(ws, ".git", "config.worktree"), "[user]\n\tname = u\n");
    const { result } = await attack(`printf '${evilConfig()}' >> .git/config.worktree`);
    expect(result.stderr).toMatch(/Read-only file system/);
    userGitEverywhere();
  });

  it("a new nested repository (git init sub) is moved out of the folder, nothing lost", async () => {
    initRepo(ws);
    mkdirSync(join(ws, "sub"));
    const { check } = await attack(`git init -q sub && git -C sub config core.fsmonitor "touch ${marker}"`);
    const refusal = check.refused.find((r) => r.path === "sub/.git");
    expect(refusal?.why).toMatch(/nested git repository/);
    expect(existsSync(join(ws, "sub", ".git"))).toBe(false);
    expect(refusal?.movedTo).toMatch(/quarantine\/.*\/sub\/\.git\.quarantined$/);
    expect(readFileSync(join(refusal?.movedTo ?? "", "config"), "utf8")).toContain("fsmonitor");
    userGitEverywhere(join(ws, "sub"));
  });

  it("a new repository at the top of an excluded folder (dist/, vendor/) is moved out", async () => {
    initRepo(ws);
    const { check } = await attack(
      `for d in dist vendor; do git init -q $d && git -C $d config core.fsmonitor "touch ${marker}"; done`,
    );
    expect(check.refused.map((r) => r.path)).toEqual(["dist/.git", "vendor/.git"]);
    userGitEverywhere(join(ws, "dist"), join(ws, "vendor"));
  });

  it("a new nested .git symlink to a planted repository is moved out", async () => {
    initRepo(ws);
    const { check } = await attack(
      `git init -q --bare planted.git && git -C planted.git config core.fsmonitor "touch ${marker}" && git -C planted.git config core.bare false && mkdir sub && ln -s ../planted.git sub/.git`,
    );
    expect(check.refused.map((r) => r.path)).toContain("sub/.git");
    userGitEverywhere(join(ws, "sub"));
  });

  it("a folder that is not a repository cannot be made one (git init at the top)", async () => {
    mkdirSync(ws);
    writeFileSync(join(ws, "a.txt"), "a\n");
    const { result, check } = await attack(
      `git init -q . && git config core.fsmonitor "touch ${marker}"; echo done`,
    );
    expect(result.stdout).toContain("done");
    expect(check.refused.find((r) => r.path === ".git")?.why).toMatch(/git repository/);
    expect(existsSync(join(ws, ".git"))).toBe(false);
    userGitEverywhere();
  });

  it("an absent .git/hooks folder: a hook the command plants there is moved out", async () => {
    initRepo(ws);
    await rm(join(ws, ".git", "hooks"), { recursive: true });
    const { check } = await attack(
      `mkdir .git/hooks && printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`,
    );
    expect(check.refused.map((r) => r.path)).toContain(".git/hooks");
    expect(existsSync(join(ws, ".git", "hooks"))).toBe(false);
    userGitEverywhere();
  });

  it("a new gitlink .git file in a folder that is no repository is moved out", async () => {
    mkdirSync(ws);
    const { check } = await attack(
      `git init -q --bare planted.git && git -C planted.git config core.fsmonitor "touch ${marker}" && git -C planted.git config core.bare false && mkdir sub && echo "gitdir: ../planted.git" > sub/.git`,
    );
    expect(check.refused.map((r) => r.path)).toContain("sub/.git");
    userGitEverywhere(join(ws, "sub"));
  });

  it("core.hooksPath=.husky: the hooks folder stays read-only, present or absent", async () => {
    initRepo(ws);
    git(ws, "config", "core.hooksPath", ".husky");
    const hook = `printf '#!/bin/sh\\ntouch ${marker}\\n' > .husky/pre-commit; chmod +x .husky/pre-commit`;
    // absent: nothing stands in for it in the user's folder; what the command made there is moved out
    const absent = await attack(`mkdir -p .husky; ${hook}`);
    expect(absent.check.refused.map((r) => r.path)).toContain(".husky");
    expect(existsSync(join(ws, ".husky"))).toBe(false);
    mkdirSync(join(ws, ".husky"));
    writeFileSync(join(ws, ".husky", "pre-push"), "#!/bin/sh\nexit 0\n");
    const present = await attack(hook);
    expect(present.result.stderr).toMatch(/Read-only file system/);
    userGitEverywhere();
  });

  it("a hooks folder that is a link: the link and the folder it points to stay read-only", async () => {
    initRepo(ws);
    mkdirSync(join(ws, "tools", "hooks"), { recursive: true });
    symlinkSync("tools/hooks", join(ws, ".husky"));
    git(ws, "config", "core.hooksPath", ".husky");
    const { result } = await attack(
      `printf '#!/bin/sh\\ntouch ${marker}\\n' > tools/hooks/pre-commit; chmod +x tools/hooks/pre-commit; rm -f .husky; mkdir .husky && printf '#!/bin/sh\\ntouch ${marker}\\n' > .husky/pre-commit && chmod +x .husky/pre-commit`,
    );
    expect(result.stderr).toMatch(/Read-only file system|Device or resource busy/);
    expect(existsSync(join(ws, "tools", "hooks", "pre-commit"))).toBe(false);
    userGitEverywhere();
  });

  it("an existing nested .git link cannot be swapped for a planted repository", async () => {
    initRepo(ws);
    initRepo(join(ws, "real"));
    mkdirSync(join(ws, "sub"));
    symlinkSync("../real/.git", join(ws, "sub", ".git"));
    await attack(
      `rm -rf sub/.git; git init -q sub; git -C sub config core.fsmonitor "touch ${marker}"; echo done`,
    );
    userGitEverywhere(join(ws, "sub"));
  });

  it("a file named by include.path stays read-only; an absent one is moved out", async () => {
    initRepo(ws);
    writeFileSync(join(ws, "team.gitconfig"), "[user]\n\tname = team\n");
    git(ws, "config", "--add", "include.path", "../team.gitconfig");
    git(ws, "config", "--add", "includeIf.onbranch:main.path", "../later.gitconfig");
    const { result, check } = await attack(
      `printf '${evilConfig()}' >> team.gitconfig; printf '${evilConfig()}' > later.gitconfig`,
    );
    expect(result.stderr).toMatch(/Read-only file system/);
    expect(check.refused.map((r) => r.path)).toContain("later.gitconfig");
    userGitEverywhere();
  });

  it("the .git file of a linked worktree stays read-only", async () => {
    const main = join(base, "main");
    initRepo(main);
    git(main, "worktree", "add", "-q", ws);
    await attack(
      `git init -q --bare planted.git && git -C planted.git config core.fsmonitor "touch ${marker}" && git -C planted.git config core.bare false; echo "gitdir: $PWD/planted.git" > .git`,
    );
    expect(readFileSync(join(ws, ".git"), "utf8")).toMatch(/worktrees/);
    userGitEverywhere();
  });

  it("a submodule's config and hooks (.git/modules/**) stay read-only; a new module gitdir is moved out", async () => {
    const upstream = join(base, "upstream");
    initRepo(upstream);
    initRepo(ws);
    git(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", upstream, "lib");
    git(ws, "commit", "-qm", "submodule");
    const { check } = await attack(
      [
        `git -C lib config core.fsmonitor "touch ${marker}"`,
        `echo '[core] fsmonitor = touch ${marker}' >> .git/modules/lib/config`,
        `printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/modules/lib/hooks/pre-commit`,
        `echo "gitdir: ../planted" > lib/.git`,
        `mkdir -p .git/modules/evil && cp -r .git/modules/lib/* .git/modules/evil/ 2>/dev/null; echo ok`,
      ].join("; "),
    );
    expect(check.refused.map((r) => r.path)).toContain(".git/modules/evil");
    userGitEverywhere(join(ws, "lib"));
  });

  it("an existing nested repository keeps its config read-only and gets no commondir", async () => {
    initRepo(ws);
    initRepo(join(ws, "tools", "lib"));
    const { check } = await attack(
      [
        `echo '[core] fsmonitor = touch ${marker}' >> tools/lib/.git/config`,
        `mkdir planted && cp -r tools/lib/.git/objects tools/lib/.git/refs planted/ && printf '${evilConfig()}' > planted/config && echo "$PWD/planted" > tools/lib/.git/commondir`,
      ].join("; "),
    );
    expect(check.refused.map((r) => r.path)).toContain("tools/lib/.git/commondir");
    userGitEverywhere(join(ws, "tools", "lib"));
  });
});

describe("git: umbra run says what it moved out", () => {
  it("prints the refusal on stderr and in --json", async () => {
    requireBuiltCli();
    initRepo(ws);
    const script = `git init -q sub && git -C sub config core.fsmonitor "touch ${marker}"`;
    const plain = umbraSync(env, ["run", "--root", ws, "--", "sh", "-c", script]);
    expect(plain.code).toBe(0);
    expect(plain.stderr).toMatch(
      /umbra: refused sub\/\.git: a new nested git repository .* moved to .*quarantine/,
    );
    const json = umbraSync(env, ["run", "--root", ws, "--json", "--", "sh", "-c", script]);
    expect((JSON.parse(json.stdout) as { refused: { path: string }[] }).refused).toEqual([
      expect.objectContaining({ path: "sub/.git" }),
    ]);
    userGitEverywhere(join(ws, "sub"));
  });
});

describe("git: a workspace's config cannot blind the guard", () => {
  it("index.excludeDirs in .umbra/config.json does not stop the check of new repositories below a folder", async () => {
    requireBuiltCli();
    initRepo(ws);
    mkdirSync(join(ws, "src", "app"), { recursive: true });
    mkdirSync(join(ws, ".umbra"));
    writeFileSync(join(ws, ".umbra", "config.json"), JSON.stringify({ index: { excludeDirs: ["src"] } }));
    const script = `git init -q src/app && git -C src/app config core.fsmonitor "touch ${marker}"`;
    const run = umbraSync(env, ["run", "--root", ws, "--", "sh", "-c", script]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/refused src\/app\/\.git/);
    userGitEverywhere(join(ws, "src", "app"));
  });
});

describe("git: the test run after an accept is guarded the same way", () => {
  it("a test command that plants a nested repository: moved out and reported", async () => {
    initRepo(ws);
    const tests = await runTests(
      ws,
      `git init -q sub && git -C sub config core.fsmonitor "touch ${marker}"`,
      loadConfig({ workspaceRoot: ws, env }),
      { env },
    );
    expect(tests.refused.map((r) => r.path)).toEqual(["sub/.git"]);
    userGitEverywhere(join(ws, "sub"));
  });
});

describe("git: ordinary work in the folder keeps working", () => {
  it("git add and commit inside the sandbox, nothing refused", async () => {
    initRepo(ws);
    const { result, check } = await attack(
      "echo b > b.txt && git add b.txt && git -c user.name=a -c user.email=a@a commit -qm b && git log --format=%s",
    );
    expect(result.stdout).toContain("b\nbase");
    expect(check.refused).toEqual([]);
    expect(readdirSync(ws).sort()).toEqual([".git", "a.txt", "b.txt"]);
  });
});

describe("git variants: other ways to make the user's git run a command's code", () => {
  /** A bare-looking git directory (HEAD, objects, refs, config) in `dir`: git takes a folder holding one for a repository. */
  const bareRepo = (dir: string) =>
    `mkdir -p ${dir}/objects ${dir}/refs/heads && echo 'ref: refs/heads/main' > ${dir}/HEAD && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = touch ${marker}\\n' > ${dir}/config`;

  it("a folder made a bare-looking git directory (HEAD, objects, refs) inside a repository", async () => {
    initRepo(ws);
    mkdirSync(join(ws, "src"));
    const { check } = await attack(bareRepo("src"));
    expect(check.refused.map((r) => r.path)).toContain("src/HEAD");
    userGitEverywhere(join(ws, "src"));
  });

  it("a folder made a git directory by a HEAD and a commondir naming planted objects, refs and config", async () => {
    initRepo(ws);
    mkdirSync(join(ws, "src"));
    const { check } = await attack(
      `mkdir -p planted/objects planted/refs/heads && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = ../src\\n\\tfsmonitor = touch ${marker}\\n' > planted/config && echo 'ref: refs/heads/main' > src/HEAD && echo ../planted > src/commondir`,
    );
    expect(check.refused.map((r) => r.path)).toContain("src/HEAD");
    userGitEverywhere(join(ws, "src"));
  });

  it("the top of a folder that is no repository made a bare-looking git directory", async () => {
    mkdirSync(ws);
    writeFileSync(join(ws, "a.txt"), "a\n");
    await attack(bareRepo("."));
    userGitEverywhere();
  });

  it("the top .git folder cannot be renamed away (its control files are mounts) nor emptied of them", async () => {
    initRepo(ws);
    await attack(
      `mv .git .git-old; git init -q . ; git config core.fsmonitor "touch ${marker}"; mv .git/config .git/c2; echo done`,
    );
    userGitEverywhere();
    expect(git(ws, "log", "--format=%s")).toContain("base");
  });

  it("a .git folder renamed away and replaced (where no mount pins it): the new one is moved out, the old one put back", async () => {
    initRepo(ws);
    const { git: guard } = await openWorkspaceSandbox();
    // what a command can do under a backend that keeps .git/config read-only by path rules only (Seatbelt)
    execFileSync(
      "sh",
      ["-c", `mv .git .git-old && git init -q . && git config core.fsmonitor "touch ${marker}"`],
      {
        cwd: ws,
        env,
      },
    );
    const check = guard ? await checkGitAfterRun(guard, env) : { refused: [], warnings: [] };
    expect(check.refused.map((r) => r.path)).toEqual([".git"]);
    expect(check.warnings.join("\n")).toMatch(/renamed \.git to \.git-old; umbra put it back/);
    expect(existsSync(join(ws, ".git-old"))).toBe(false);
    userGitEverywhere();
    expect(git(ws, "log", "--format=%s")).toContain("base");
  });

  it("work: a bare repository the folder already holds (a test fixture) is left as it is", async () => {
    initRepo(ws);
    git(ws, "init", "-q", "--bare", "fixtures/remote.git");
    const { result, check } = await attack("git -C fixtures/remote.git rev-parse --is-bare-repository");
    expect(result.stdout).toContain("true");
    expect(check.refused).toEqual([]);
    expect(existsSync(join(ws, "fixtures", "remote.git", "HEAD"))).toBe(true);
  });

  it("a linked worktree's git directory (.git/worktrees/NAME): its commondir and config stay the user's", async () => {
    initRepo(ws);
    const linked = join(base, "linked");
    git(ws, "worktree", "add", "-q", linked);
    git(ws, "config", "extensions.worktreeConfig", "true");
    const name = readdirSync(join(ws, ".git", "worktrees"))[0] as string;
    await attack(
      [
        `printf '${evilConfig()}' > .git/worktrees/${name}/config.worktree`,
        `mkdir planted && cp -r .git/objects .git/refs .git/HEAD planted/ && printf '${evilConfig()}' > planted/config && echo "$PWD/planted" > .git/worktrees/${name}/commondir`,
        "echo done",
      ].join("; "),
    );
    userGitEverywhere(linked);
  });

  it("include.path through ~ and includeIf gitdir: the named files stay read-only or are moved out", async () => {
    initRepo(ws);
    git(ws, "config", "--add", "includeIf.gitdir:**/ws/.path", "../team2.gitconfig");
    git(ws, "config", "--add", "includeIf.hasconfig:remote.*.url:**.path", "../team3.gitconfig");
    writeFileSync(join(ws, "team2.gitconfig"), "[user]\n\tname = team\n");
    const { check } = await attack(
      `printf '${evilConfig()}' >> team2.gitconfig; printf '${evilConfig()}' > team3.gitconfig; echo done`,
    );
    expect(check.refused.map((r) => r.path)).toContain("team3.gitconfig");
    userGitEverywhere();
  });

  it("a new nested repository below a new folder, several levels deep", async () => {
    initRepo(ws);
    const { check } = await attack(
      `mkdir -p a/b/c/d && git init -q a/b/c/d && git -C a/b/c/d config core.fsmonitor "touch ${marker}"`,
    );
    expect(check.refused.map((r) => r.path)).toEqual(["a/b/c/d/.git"]);
    userGitEverywhere(join(ws, "a", "b", "c", "d"));
  });

  it("a .git file of a linked-worktree form pointing into a planted .git/worktrees entry", async () => {
    initRepo(ws);
    const { check } = await attack(
      `mkdir -p .git/worktrees/evil sub && printf '${evilConfig()}' > .git/worktrees/evil/config.worktree; echo ref: refs/heads/main > .git/worktrees/evil/HEAD; echo ../.. > .git/worktrees/evil/commondir; echo "gitdir: $PWD/.git/worktrees/evil" > sub/.git; echo done`,
    );
    expect(check.refused.map((r) => r.path)).toContain("sub/.git");
    userGitEverywhere(join(ws, "sub"));
  });

  it("a hooks folder given by an absolute core.hooksPath inside the folder stays read-only", async () => {
    initRepo(ws);
    mkdirSync(join(ws, "githooks"));
    git(ws, "config", "core.hooksPath", join(ws, "githooks"));
    const { result } = await attack(
      `printf '#!/bin/sh\\ntouch ${marker}\\n' > githooks/pre-commit; chmod +x githooks/pre-commit; echo done`,
    );
    expect(result.stderr).toMatch(/Read-only file system/);
    userGitEverywhere();
  });

  it("the user's global config: a relative core.hooksPath and an include of a file inside the folder", async () => {
    initRepo(ws);
    const globalConfig = join(base, "home", ".gitconfig");
    writeFileSync(
      globalConfig,
      `[core]\n\thooksPath = .githooks\n[include]\n\tpath = ${join(ws, "local.gitconfig")}\n`,
    );
    const { result, check } = await attack(
      `mkdir -p .githooks; printf '#!/bin/sh\\ntouch ${marker}\\n' > .githooks/pre-commit; chmod +x .githooks/pre-commit; printf '${evilConfig()}' > local.gitconfig; echo done`,
    );
    expect(result.stdout).toContain("done");
    expect(existsSync(join(ws, ".githooks", "pre-commit"))).toBe(false);
    expect(check.refused.map((r) => r.path)).toContain("local.gitconfig");
    userGitEverywhere();
  });

  it("an existing nested repository's hooks folder stays read-only (a pre-commit hook planted there)", async () => {
    initRepo(ws);
    initRepo(join(ws, "tools", "lib"));
    const { result } = await attack(
      `printf '#!/bin/sh\\ntouch ${marker}\\n' > tools/lib/.git/hooks/pre-commit; chmod +x tools/lib/.git/hooks/pre-commit; echo done`,
    );
    expect(result.stdout).toContain("done");
    expect(existsSync(join(ws, "tools", "lib", ".git", "hooks", "pre-commit"))).toBe(false);
    userGitEverywhere(join(ws, "tools", "lib"));
  });

  it(".git/config variants (pager, editor, sshCommand, drivers, includes) and attribute files planting a driver", async () => {
    initRepo(ws);
    const before = readFileSync(join(ws, ".git", "config"), "utf8");
    const keys = [
      "core.pager",
      "core.editor",
      "core.sshCommand",
      "core.askPass",
      "core.hooksPath",
      "filter.evil.smudge",
      "filter.evil.clean",
      "filter.evil.process",
      "diff.evil.textconv",
      "diff.external",
      "merge.evil.driver",
      "include.path",
      "includeIf.gitdir:/.path",
      "alias.status",
    ];
    await attack(
      [
        ...keys.map((key) => `git config ${key} "touch ${marker}"`),
        `git config --file .git/config core.fsmonitor "touch ${marker}"`,
        `git config --worktree core.fsmonitor "touch ${marker}"`,
        `printf '* filter=evil diff=evil merge=evil\\n' > .gitattributes`,
        `mkdir -p .git/info && printf '* filter=evil diff=evil\\n' > .git/info/attributes`,
        `cp .git/config /tmp/c && echo '[core] fsmonitor = touch ${marker}' >> /tmp/c && cat /tmp/c > .git/config`,
        "echo done",
      ].join("; "),
    );
    expect(readFileSync(join(ws, ".git", "config"), "utf8")).toBe(before);
    writeFileSync(join(ws, "a.txt"), "changed\n");
    userGitEverywhere();
    for (const args of [["diff"], ["add", "-A"], ["checkout", "--", "a.txt"], ["log", "-p", "-1"]]) {
      try {
        git(ws, ...args);
      } catch {
        // refused or broken is not run
      }
    }
  });

  it("the top .git folder swapped for a symlink to a planted repository", async () => {
    initRepo(ws);
    await attack(
      `git init -q --bare /var/tmp/x 2>/dev/null; git init -q --bare planted.git && git -C planted.git config core.bare false && git -C planted.git config core.fsmonitor "touch ${marker}"; mv .git .git-old 2>/dev/null || rm -rf .git 2>/dev/null; ln -s planted.git .git 2>/dev/null; echo done`,
    );
    userGitEverywhere();
  });
});
