import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseGitIndex } from "../../src/workspace/git-index.js";
import { cleanupTemp, hasGit, makeTemp, paths, scan, skipOf, writeTree } from "./helpers.js";

/** Runs git in `root` isolated from the machine's git configuration. */
function git(root: string, ...args: string[]): string {
  const home = join(root, "..");
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
  };
  return execFileSync("git", args, { cwd: root, env, encoding: "utf8" });
}

const TREE = {
  "src/app.ts": "export const app = 1;\n",
  "build/x.ts": "export const built = 1;\n",
  "build/output.js": "untracked build output\n",
  "build/gen/deep.ts": "export const deep = 1;\n",
  "build/cache/blob.txt": "untracked\n",
  "vendor/lib/lib.go": "package lib\n",
  "out/main.ts": "export {};\n",
  "node_modules/pkg/index.js": "untracked dependency\n",
  "dist/bundle.js": "untracked\n",
};
const TRACKED = ["src/app.ts", "build/x.ts", "build/gen/deep.ts", "vendor/lib/lib.go", "out/main.ts"];

describe.skipIf(!hasGit())("default-excluded folders that git tracks", () => {
  afterEach(cleanupTemp);

  for (const version of ["2", "3", "4"]) {
    it(`scans the tracked files of build/, vendor/ and out/ (index version ${version})`, async () => {
      const root = join(makeTemp(), "repo");
      writeTree(root, TREE);
      git(root, "init", "-q");
      git(root, "update-index", "--add", ...TRACKED);
      git(root, "update-index", "--index-version", version);
      expect(parseGitIndex(readFileSync(join(root, ".git", "index")))).toEqual([...TRACKED].sort());

      const result = await scan(root);
      expect(paths(result)).toEqual([...TRACKED].sort());
      expect(skipOf(result, "build/output.js")?.reason).toBe("excluded-dir");
      expect(skipOf(result, "build/cache")?.reason).toBe("excluded-dir");
      expect(skipOf(result, "node_modules")?.reason).toBe("excluded-dir");
      expect(skipOf(result, "dist")?.reason).toBe("excluded-dir");
    });
  }

  it("applies to a workspace that is a folder inside the repository", async () => {
    const root = join(makeTemp(), "repo");
    writeTree(root, { "pkg/build/x.ts": "export {};\n", "pkg/build/y.js": "untracked\n", "build/z.ts": "" });
    git(root, "init", "-q");
    git(root, "add", "pkg/build/x.ts", "build/z.ts");
    expect(paths(await scan(join(root, "pkg")))).toEqual(["build/x.ts"]);
  });

  it("keeps the default list outside git, and a list the user gives as it is", async () => {
    const plain = join(makeTemp(), "plain");
    writeTree(plain, TREE);
    expect(paths(await scan(plain))).toEqual(["src/app.ts"]);

    const root = join(makeTemp(), "repo");
    writeTree(root, TREE);
    git(root, "init", "-q");
    git(root, "add", ...TRACKED);
    expect(paths(await scan(root, { excludeDirs: ["build", "vendor", "out"] }))).toEqual([
      "dist/bundle.js",
      "node_modules/pkg/index.js",
      "src/app.ts",
    ]);
  });

  it("reads the object format of a hostile or sha256 repository's config at once", async () => {
    const root = join(makeTemp(), "repo");
    writeTree(root, TREE);
    git(root, "init", "-q");
    git(root, "add", ...TRACKED);
    // Blank lines, each of which the object-format pattern read on to the end of: seconds, minutes at 1 MiB.
    const config = join(root, ".git", "config");
    writeTree(root, { ".git/config": `${readFileSync(config, "utf8")}${"\n\t".repeat(100_000)}` });
    expect(paths(await scan(root))).toEqual([...TRACKED].sort());

    const sha256 = join(makeTemp(), "repo256");
    writeTree(sha256, TREE);
    git(sha256, "init", "-q", "--object-format=sha256");
    git(sha256, "add", ...TRACKED);
    expect(readFileSync(join(sha256, ".git", "config"), "utf8")).toMatch(/^\s+objectformat = sha256$/m);
    expect(paths(await scan(sha256))).toEqual([...TRACKED].sort());
  }, 10_000);

  it("treats a damaged index as no index", async () => {
    const root = join(makeTemp(), "repo");
    writeTree(root, TREE);
    git(root, "init", "-q");
    git(root, "add", ...TRACKED);
    const index = readFileSync(join(root, ".git", "index"));
    expect(parseGitIndex(index.subarray(0, 40))).toBeUndefined();
    expect(parseGitIndex(Buffer.from("not an index at all"))).toBeUndefined();
    writeTree(root, { ".git/index": index.subarray(0, 60) });
    expect(paths(await scan(root))).toEqual(["src/app.ts"]);
  });
});
