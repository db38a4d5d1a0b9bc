import { execFileSync } from "node:child_process";
import { access, chmod, mkdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import {
  countCoChanges,
  historyHead,
  MAX_FILES_PER_COMMIT,
  parseNameLog,
  readHistory,
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

/** A new git repository with no commit yet; its parent is cleaned up. */
async function repository(): Promise<{ root: string; commit: (files: Record<string, string>) => void }> {
  const parent = await tempDir("history");
  dirs.push(parent);
  const root = join(parent, "repo");
  await mkdir(root);
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd: root });
  git("init", "-q");
  let n = 0;
  return {
    root,
    commit(files) {
      for (const [path, text] of Object.entries(files)) {
        execFileSync("mkdir", ["-p", dirname(join(root, path))]);
        execFileSync("tee", [join(root, path)], { input: text });
      }
      git("add", "-A");
      git("commit", "-qm", `change ${++n}`);
    },
  };
}

describe("reading which files change together", () => {
  it("parses git log's NUL-separated names, odd names included", () => {
    const log = "\x01\0\na.py\0dir/b c.py\0\x01\0\nline\nbreak.py\0\x01\0";
    expect(parseNameLog(log)).toEqual([["a.py", "dir/b c.py"], ["line\nbreak.py"], []]);
  });

  it("counts each file's commits and each pair's, passing over huge commits and unkept files", () => {
    const huge = Array.from({ length: MAX_FILES_PER_COMMIT + 1 }, (_, i) => `f${i}.py`);
    const { commits, pairs } = countCoChanges(
      [["a.py", "b.py"], ["a.py", "b.py", "c.py", "secret.env"], ["a.py"], ["a.py", ...huge]],
      (path) => path.endsWith(".py"),
    );
    expect(commits.get("a.py")).toBe(3);
    expect(commits.get("b.py")).toBe(2);
    expect(commits.has("secret.env")).toBe(false);
    expect(commits.has("f0.py")).toBe(false);
    expect(pairs.get("a.py")?.get("b.py")).toBe(2);
    expect(pairs.get("b.py")?.get("a.py")).toBe(2);
    expect(pairs.get("c.py")?.get("a.py")).toBe(1);
    expect(pairs.get("a.py")?.has("secret.env")).toBe(false);
  });

  it("reads the history at HEAD, newest first", async () => {
    const { root, commit } = await repository();
    commit({ "a.py": "1", "b.py": "1" });
    commit({ "a.py": "2" });
    const head = await historyHead(root);
    expect(head).toMatch(/^[0-9a-f]{40}$/);
    expect(await readHistory(root, head as string)).toEqual([["a.py"], ["a.py", "b.py"]]);
  });

  it("runs nothing a hostile repository's configuration names", async () => {
    const { root, commit } = await repository();
    commit({ "a.py": "1" });
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
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd: root });
    git("-c", `gpg.program=${program}`, "commit", "-q", "-S", "--allow-empty", "-m", "signed");
    for (const [key, value] of [
      ["log.showSignature", "true"],
      ["gpg.program", program],
      ["core.fsmonitor", program],
    ])
      git("config", key as string, value as string);
    // the repository's own git runs the program on a plain log …
    git("log", "--name-only");
    await expect(access(marker)).resolves.toBeUndefined();
    await rm(marker);
    // … umbra's read does not
    const head = await historyHead(root);
    expect(await readHistory(root, head as string)).toEqual([[], ["a.py"]]);
    await expect(access(marker)).rejects.toThrow();
  });

  it("reads no history through a .git that is a link, nor from a repository above the workspace", async () => {
    const { root, commit } = await repository();
    commit({ "sub/a.py": "1" });
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

describe("co-changed files in search", () => {
  it("lifts a file that changed with the best-ranked one, and keeps no pair of files it does not index", async () => {
    const { root, commit } = await repository();
    const filler: Record<string, string> = {};
    for (let i = 0; i < 12; i++)
      filler[`pkg/part${i}.py`] =
        `def part${i}(value, width):\n    """Render the value padded to the width."""\n    return str(value).rjust(width)\n`;
    commit(filler);
    const table = (n: number) =>
      `def render_table(rows, width):\n    """Render rows of values padded to the width."""\n    return [str(v).rjust(width) for v in rows]  # ${n}\n`;
    // the table and its styles always change together; the styles hold one of the report's words only
    for (let n = 0; n < 3; n++)
      commit({
        "pkg/table.py": table(n),
        "pkg/styles.py": `BORDER = "${"-".repeat(n + 1)}"\nWIDTH = ${n}\n`,
        "logo.png": `\x89PNG\0${n}`,
      });
    const home = await tempDir("history-home");
    dirs.push(home);
    const env = { ...process.env, UMBRA_HOME: home };
    await indexWorkspace(root, { config, env });
    const index = await openIndex(root, config, env);
    try {
      const report =
        "render_table(rows, width) pads each value to the wrong width when the table is rendered";
      const rank = async (coChangeBoost: number) => {
        const files: string[] = [];
        for (const hit of await search(index, report, { limit: 50, coChangeBoost }))
          if (!files.includes(hit.path)) files.push(hit.path);
        return files;
      };
      const boosted = await rank(0.5);
      const plain = await rank(0);
      expect(boosted[0]).toBe("pkg/table.py");
      expect(plain.indexOf("pkg/styles.py")).toBeGreaterThan(1);
      expect(boosted[1]).toBe("pkg/styles.py");
      expect(index.lexical.coChanged("pkg/table.py")).toEqual({
        commits: 3,
        partners: new Map([["pkg/styles.py", { n: 3, commits: 3 }]]),
      });
    } finally {
      index.close();
    }
  });
});
