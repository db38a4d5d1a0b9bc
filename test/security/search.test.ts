/**
 * Search probes: what the ignore rules hide now never comes back from `umbra search`, also when the
 * file was indexed before it was ignored (the index is not trusted to be current).
 */
import { execFileSync } from "node:child_process";
import { link, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { requireBuiltCli, umbraSync } from "../helpers/cli.js";
import { cleanup, copyExamples, tempDir } from "../helpers/workspace.js";

let home: string;
let root: string;
let env: NodeJS.ProcessEnv;

beforeAll(() => requireBuiltCli());
beforeEach(async () => {
  home = await tempDir("search-home");
  root = await copyExamples();
  env = { ...process.env, UMBRA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") };
});
afterEach(async () => {
  await cleanup(home, join(root, ".."));
});

function hits(): string[] {
  const run = umbraSync(env, [
    "search",
    "--root",
    root,
    "--json",
    "--limit",
    "20",
    "invoice total tax money",
  ]);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { path: string }[]).map((hit) => hit.path);
}

describe("umbra search", () => {
  it("attack ignored-after-indexing: a folder ignored since it was indexed is never a hit", async () => {
    expect(umbraSync(env, ["index", root]).code).toBe(0);
    expect(hits().some((path) => path.startsWith("billing/"))).toBe(true);
    await writeFile(join(root, ".umbraignore"), "billing/\n");
    expect(hits().filter((path) => path.startsWith("billing/"))).toEqual([]);
    await writeFile(join(root, ".umbraignore"), "");
    await writeFile(join(root, "billing", ".cursorignore"), "tax.ts\n");
    expect(hits()).not.toContain("billing/tax.ts");
  });

  it("attack odd-files: a FIFO named .gitignore or .umbraignore in a folder does not hang indexing or search", async () => {
    execFileSync("mkfifo", [join(root, "billing", ".gitignore"), join(root, "billing", ".umbraignore")]);
    expect(umbraSync(env, ["index", root]).code).toBe(0);
    expect(hits()).toContain("billing/invoice.ts");
  });

  it("work: search finds what is not ignored", () => {
    expect(umbraSync(env, ["index", root]).code).toBe(0);
    expect(hits()).toContain("billing/invoice.ts");
  });
});

describe("umbra grep", () => {
  it("attack nested-ignore: a file a nested .umbraignore or .cursorignore matches is never a match", async () => {
    await writeFile(join(root, "billing", ".umbraignore"), "tax.ts\n");
    await writeFile(join(root, "inventory", ".cursorignore"), "*.py\n");
    const run = umbraSync(env, ["grep", "--root", root, "--json", "-i", "tax|stock"]);
    const paths = (JSON.parse(run.stdout) as { path: string }[]).map((match) => match.path);
    expect(paths).not.toContain("billing/tax.ts");
    expect(paths.filter((path) => path.startsWith("inventory/") && path.endsWith(".py"))).toEqual([]);
    expect(paths).toContain("billing/invoice.ts");
  });
});

describe("umbra grep in excluded folders, with and without ripgrep", () => {
  for (const tool of ["ripgrep", "git grep"] as const) {
    it(`attack nested-ignore-excluded: rules inside node_modules, build and .vercel apply (${tool})`, async () => {
      execFileSync("git", ["init", "-q"], { cwd: root });
      for (const dir of ["node_modules/pkg", "build", ".vercel/output"]) {
        await mkdir(join(root, dir), { recursive: true });
        await writeFile(join(root, dir, ".umbraignore"), "token.txt\n");
        await writeFile(join(root, dir, "token.txt"), "WS_SECRET_grep token\n");
        await writeFile(join(root, dir, "fine.txt"), "WS_SECRET_grep is a word\n");
      }
      const bin = join(home, "bin");
      await mkdir(bin, { recursive: true });
      await symlink(
        execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim(),
        join(bin, "git"),
      );
      const run = umbraSync(tool === "git grep" ? { ...env, PATH: bin } : env, [
        "grep",
        "--root",
        root,
        "--json",
        "WS_SECRET_grep",
      ]);
      expect(run.code, run.stderr).toBe(0);
      const paths = (JSON.parse(run.stdout) as { path: string }[]).map((match) => match.path);
      expect(paths.filter((path) => path.endsWith("token.txt"))).toEqual([]);
      expect(paths.some((path) => path.endsWith("fine.txt"))).toBe(true);
    });
  }
});

describe("hard links to hidden files", () => {
  it("attack hardlink: umbra grep and umbra search never show a hidden file through a hard link", async () => {
    await writeFile(join(root, ".umbraignore"), ".env\nsecrets/\n");
    await writeFile(join(root, ".env"), "WS_SECRET_needle=1\n");
    await mkdir(join(root, "secrets"));
    await writeFile(join(root, "secrets", "id.pem"), "WS_SECRET_needle pem\n");
    await link(join(root, ".env"), join(root, "notes.txt"));
    await link(join(root, "secrets", "id.pem"), join(root, "billing", "key.txt"));
    await writeFile(join(root, "plain.txt"), "WS_SECRET_needle is only a word here\n");
    await link(join(root, "plain.txt"), join(root, "plain-link.txt"));
    const grep = umbraSync(env, ["grep", "--root", root, "--json", "WS_SECRET_needle"]);
    const paths = (JSON.parse(grep.stdout) as { path: string }[]).map((match) => match.path).sort();
    expect(paths).toEqual(["plain-link.txt", "plain.txt"]);
    expect(umbraSync(env, ["index", root]).code).toBe(0);
    const search = umbraSync(env, ["search", "--root", root, "--json", "WS_SECRET_needle"]);
    expect(search.code, search.stderr).toBe(0);
    expect(search.stdout).not.toContain("WS_SECRET_needle=1");
    expect(search.stdout).not.toContain("pem");
    expect(search.stdout).toContain("plain");
  });

  it("attack hardlink-after-indexing: an indexed file replaced by a hard link to a hidden file shows nothing of it", async () => {
    await writeFile(join(root, ".umbraignore"), ".env\n");
    await writeFile(join(root, ".env"), "WS_SECRET_late=1\nexport function invoiceTotal() {}\n");
    expect(umbraSync(env, ["index", root]).code).toBe(0);
    await rm(join(root, "billing", "invoice.ts"));
    await link(join(root, ".env"), join(root, "billing", "invoice.ts"));
    const search = umbraSync(env, ["search", "--root", root, "--limit", "20", "invoice total tax money"]);
    expect(search.code, search.stderr).toBe(0);
    expect(search.stdout).not.toContain("WS_SECRET_late");
  });
});
