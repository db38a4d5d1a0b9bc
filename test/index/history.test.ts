import { execFileSync } from "node:child_process";
import { access, chmod, mkdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import {
  historyHead,
  MAX_FILES_PER_COMMIT,
  parseCommitLog,
  readHistory,
  telling,
} from "../../src/index/history.js";
import { indexWorkspace } from "../../src/index/indexer.js";
import { openIndex } from "../../src/index/open.js";
import { search } from "../../src/index/search/searcher.js";
import { cleanup, tempDir } from "../helpers/workspace.js";

const config = loadConfig({ env: {} });
const dirs: string[] = [];
afterEach(async () => {
  await cleanup(...dirs.splice(0));
});

interface Repository {
  root: string;
  git: (...args: string[]) => string;
  commit: (message: string, files: Record<string, string>) => void;
}

/** A new git repository with no commit yet; its parent is cleaned up. */
async function repository(): Promise<Repository> {
  const parent = await tempDir("history");
  dirs.push(parent);
  const root = join(parent, "repo");
  await mkdir(root);
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
      cwd: root,
      encoding: "utf8",
    });
  git("init", "-q", "-b", "main");
  return {
    root,
    git,
    commit(message, files) {
      for (const [path, text] of Object.entries(files)) {
        execFileSync("mkdir", ["-p", dirname(join(root, path))]);
        execFileSync("tee", [join(root, path)], { input: text });
      }
      git("add", "-A");
      git("commit", "-qm", message);
    },
  };
}

describe("reading the past commits", () => {
  it("parses each commit's message and its NUL-ended file names, odd names included", () => {
    const log = "\x01Fix a\n\nbody\x02\0\na.py\0dir/b c.py\0\x01Two\x02\0\nline\nbreak.py\0\x01Empty\x02\0";
    expect(parseCommitLog(log)).toEqual([
      { message: "Fix a\n\nbody", files: ["a.py", "dir/b c.py"] },
      { message: "Two", files: ["line\nbreak.py"] },
      { message: "Empty", files: [] },
    ]);
  });

  it("passes over commits that change no file or too many to say anything of one", () => {
    const many = Array.from({ length: MAX_FILES_PER_COMMIT + 1 }, (_, i) => `f${i}.py`);
    const kept = telling([
      { message: "a", files: ["a.py", "a.py"] },
      { message: "none", files: [] },
      { message: "reformat", files: many },
      { message: "most", files: many.slice(1) },
    ]);
    expect(kept.map((commit) => [commit.message, commit.files.length])).toEqual([
      ["a", 1],
      ["most", MAX_FILES_PER_COMMIT],
    ]);
  });

  it("reads plain commits and first-parent merges up to HEAD, newest first", async () => {
    const { root, git, commit } = await repository();
    commit("Add the parser", { "a.py": "1", "b.py": "1" });
    git("checkout", "-q", "-b", "topic");
    commit("Fix the tokenizer on tabs", { "c.py": "1" });
    git("checkout", "-q", "main");
    commit("Speed up a", { "a.py": "2" });
    git("merge", "-q", "--no-ff", "-m", "Merge topic: tabs in the tokenizer", "topic");
    const head = await historyHead(root);
    expect(head).toMatch(/^[0-9a-f]{40}$/);
    const commits = await readHistory(root, head as string);
    expect(commits.map((c) => [c.message.trim(), c.files])).toEqual([
      ["Speed up a", ["a.py"]],
      ["Fix the tokenizer on tabs", ["c.py"]],
      ["Add the parser", ["a.py", "b.py"]],
      ["Merge topic: tabs in the tokenizer", ["c.py"]],
    ]);
  });

  it("keeps the commits read before git stopped at a missing object", async () => {
    const { root, git, commit } = await repository();
    commit("first", { "a.py": "1" });
    commit("second", { "b.py": "1" });
    commit("third", { "c.py": "1" });
    commit("fourth", { "d.py": "1" });
    const tree = git("rev-parse", "HEAD~3^{tree}").trim();
    await rm(join(root, ".git", "objects", tree.slice(0, 2), tree.slice(2)));
    const commits = await readHistory(root, git("rev-parse", "HEAD").trim());
    expect(commits.map((c) => c.message.trim())).toContain("fourth");
    expect(commits.map((c) => c.message.trim())).not.toContain("first");
  });

  it("runs nothing a hostile repository's configuration names", async () => {
    const { root, git, commit } = await repository();
    commit("first", { "a.py": "1" });
    const marker = join(dirname(root), "ran");
    const program = join(dirname(root), "evil.sh");
    // a stand-in for gpg: it signs (so the commit carries a signature) and leaves a mark when run to verify
    await writeFile(
      program,
      `#!/bin/sh\ncase "$*" in *--verify*) touch ${marker};; esac\n` +
        `echo "[GNUPG:] SIG_CREATED D 1 8 00 0 0" >&2\n` +
        `printf -- "-----BEGIN PGP SIGNATURE-----\\n\\nfake\\n-----END PGP SIGNATURE-----\\n"\n`,
    );
    await chmod(program, 0o755);
    git("-c", `gpg.program=${program}`, "commit", "-q", "-S", "--allow-empty", "-m", "signed");
    for (const [key, value] of [
      ["log.showSignature", "true"],
      ["gpg.program", program],
      ["core.fsmonitor", program],
      ["diff.external", program],
    ])
      git("config", key as string, value as string);
    // the repository's own git runs the program on a plain log …
    git("log", "--name-only");
    await expect(access(marker)).resolves.toBeUndefined();
    await rm(marker);
    // … umbra's read does not
    const head = await historyHead(root);
    const commits = await readHistory(root, head as string);
    expect(commits.map((c) => [c.message.trim(), c.files])).toEqual([
      ["signed", []],
      ["first", ["a.py"]],
    ]);
    await expect(access(marker)).rejects.toThrow();
  });

  it("reads no history through a .git that is a link, nor from a repository above the workspace", async () => {
    const { root, commit } = await repository();
    commit("first", { "sub/a.py": "1" });
    expect(await historyHead(join(root, "sub"))).toBeUndefined();
    await rename(join(root, ".git"), join(dirname(root), "elsewhere.git"));
    await symlink(join(dirname(root), "elsewhere.git"), join(root, ".git"));
    expect(await historyHead(root)).toBeUndefined();
  });

  it("has no history without a commit", async () => {
    const { root } = await repository();
    expect(await historyHead(root)).toBeUndefined();
  });
});

describe("past commits in search", () => {
  /**
   * Look-alike modules that hold two of the report's words, and a widget that holds one and whose earlier
   * fix's message reads like the report; that fix also changed a file hidden from umbra.
   */
  async function project(): Promise<Repository> {
    const repo = await repository();
    const filler: Record<string, string> = { ".umbraignore": "private/\n" };
    for (let i = 0; i < 12; i++)
      filler[`pkg/part${i}.py`] = `def part${i}(value, width):\n    return str(value).rjust(width + ${i})\n`;
    repo.commit("Add the parts", filler);
    repo.commit("Add the widget", {
      "pkg/widget.py": 'def draw(cells):\n    """Draw a table."""\n    return [c.strip() for c in cells]\n',
    });
    repo.commit("Fix misaligned columns when a table is rendered with unicode borders", {
      "pkg/widget.py":
        'def draw(cells):\n    """Draw a table."""\n    return [c.strip().center(3) for c in cells]\n',
      "test/test_widget.py": "def test_draw():\n    assert draw(['a'])\n",
      "private/keys.py": "TOKEN = 'secret'\n",
    });
    return repo;
  }

  const report =
    "Columns misaligned with unicode borders\n\nWhen a table with unicode borders is rendered, each value is padded to the wrong width.\n";

  async function ranking(root: string, home: string, history?: number): Promise<string[]> {
    const env = { ...process.env, UMBRA_HOME: home };
    const index = await openIndex(root, config, env);
    try {
      const files: string[] = [];
      const weights = history === undefined ? {} : { weights: { history } };
      for (const hit of await search(index, report, { limit: 50, ...weights }))
        if (!files.includes(hit.path)) files.push(hit.path);
      return files;
    } finally {
      index.close();
    }
  }

  it("ranks first the file an earlier fix described like the report changed, and names no file it does not index", async () => {
    const { root } = await project();
    const home = await tempDir("history-home");
    dirs.push(home);
    await indexWorkspace(root, { config, env: { ...process.env, UMBRA_HOME: home } });
    const without = await ranking(root, home, 0);
    const withHistory = await ranking(root, home);
    expect(without.indexOf("pkg/widget.py")).toBeGreaterThan(0);
    expect(withHistory[0]).toBe("pkg/widget.py");
    expect(withHistory).not.toContain("private/keys.py");
  });

  it("reads the history again only when HEAD moves, and forgets it with the repository", async () => {
    const { root, git, commit } = await project();
    const home = await tempDir("history-home");
    dirs.push(home);
    const env = { ...process.env, UMBRA_HOME: home };
    const stored = async () => {
      const index = await openIndex(root, config, env);
      try {
        const misaligned = index.lexical.bm25Commits(new Map([["misaligned", 1]]), { limit: 5 });
        return {
          head: index.lexical.historyHead(),
          version: index.lexical.getMeta("contentVersion"),
          misaligned: misaligned.map((c) => c.files),
        };
      } finally {
        index.close();
      }
    };
    await indexWorkspace(root, { config, env });
    const first = await stored();
    expect(first.head).toBe(git("rev-parse", "HEAD").trim());
    expect(first.misaligned).toEqual([["pkg/widget.py", "test/test_widget.py"]]);
    // nothing moved: nothing is written
    await indexWorkspace(root, { config, env });
    expect(await stored()).toEqual(first);
    commit("Speed up the parts", { "pkg/part0.py": "def part0():\n    return 0\n" });
    await indexWorkspace(root, { config, env });
    expect((await stored()).head).toBe(git("rev-parse", "HEAD").trim());
    // without a history of its own, the workspace keeps none
    await rm(join(root, ".git"), { recursive: true });
    await indexWorkspace(root, { config, env });
    expect(await stored()).toMatchObject({ head: undefined, misaligned: [] });
  });
});
