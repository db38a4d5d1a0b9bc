import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS, invokedCommand } from "../../src/cli/registry.js";
import { CLI, requireBuiltCli } from "../helpers/cli.js";
import { cleanup, copyExamples, tempDir } from "../helpers/workspace.js";

describe("the command table", () => {
  it("finds the command that the arguments run, or none", () => {
    expect(invokedCommand(["search", "--root", "x", "query"])).toBe("search");
    expect(invokedCommand(["--json", "grep", "x"])).toBe("grep");
    expect(invokedCommand(["help", "shadow"])).toBe("shadow");
    expect(invokedCommand(["help"])).toBeUndefined();
    expect(invokedCommand(["--version"])).toBeUndefined();
    expect(invokedCommand(["frobnicate"])).toBeUndefined();
    expect(invokedCommand(["toString"])).toBeUndefined();
    expect(invokedCommand([])).toBeUndefined();
  });

  it("loads, for every entry, a module that registers the command of that name", async () => {
    for (const [name, entry] of Object.entries(COMMANDS)) {
      const program = new Command();
      (await entry.load())(program);
      expect(program.commands.map((command) => command.name())).toEqual([name]);
    }
  });
});

describe("what a start of the CLI loads", () => {
  let home: string;
  let root: string;
  let log: string;
  let hook: string;

  /** The files and packages that `umbra ARGS` imports (ES module resolution, as a module hook sees it). */
  async function imported(args: string[]): Promise<string[]> {
    await writeFile(log, "");
    const env = { ...process.env, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config"), IMPORT_LOG: log };
    const run = spawnSync(process.execPath, ["--import", hook, CLI, ...args], { env, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    return (await readFile(log, "utf8")).split("\n").filter(Boolean);
  }

  beforeAll(async () => {
    requireBuiltCli();
    home = await tempDir("load-home");
    root = await copyExamples();
    log = join(home, "imports.log");
    const hooks = join(home, "hooks.mjs");
    await writeFile(
      hooks,
      `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.IMPORT_LOG, result.url + "\\n");
  return result;
}
`,
    );
    hook = join(home, "register.mjs");
    await writeFile(
      hook,
      `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    const env = { ...process.env, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config") };
    expect(spawnSync(process.execPath, [CLI, "index", root], { env }).status).toBe(0);
  });
  afterAll(async () => {
    await cleanup(home, join(root, ".."));
  });

  it("imports no command module for --version and --help", async () => {
    for (const args of [["--version"], ["--help"]]) {
      const urls = await imported(args);
      const files = urls.filter((url) => url.includes("/dist/")).map((url) => url.replace(/.*\/dist\//, ""));
      expect(files.sort()).toEqual(["cli/errors.js", "cli/main.js", "cli/registry.js", "cli/safe-text.js"]);
      const packages = urls.filter((url) => url.includes("/node_modules/"));
      expect(packages.every((url) => url.includes("/node_modules/commander/"))).toBe(true);
    }
  });

  it("imports neither the agent, the language servers, tree-sitter nor a second apache-arrow to search", async () => {
    const urls = await imported(["search", "--root", root, "--json", "invoice total"]);
    expect(urls.some((url) => url.includes("/dist/index/search/searcher.js"))).toBe(true);
    for (const heavy of [
      "/node_modules/ai/",
      "/node_modules/@ai-sdk/",
      "/node_modules/vscode-languageserver-protocol/",
      "/node_modules/vscode-jsonrpc/",
      "/node_modules/web-tree-sitter/",
      "/node_modules/apache-arrow/",
      "/dist/agent/",
      "/dist/lsp/",
      "/dist/sandbox/",
      "/dist/index/embed/onnx.js",
      "/dist/index/embed/openai.js",
      "/dist/index/embed/train.js", // learning a code model: never to search
      "node:worker_threads",
    ]) {
      expect(urls.filter((url) => url.includes(heavy))).toEqual([]);
    }
  });

  it("loads apache-arrow as its one-file build to search, not as its hundreds of CommonJS modules, and no ignore matcher without ignore files", async () => {
    const cacheLog = join(home, "required.log");
    const preload = join(home, "required.cjs");
    await writeFile(
      preload,
      `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(cacheLog)}, Object.keys(require.cache).join("\\n")));\n`,
    );
    const env = { ...process.env, UMBRA_HOME: home, XDG_CONFIG_HOME: join(home, "config") };
    const run = spawnSync(
      process.execPath,
      ["--require", preload, CLI, "search", "--root", root, "invoice"],
      {
        env,
        encoding: "utf8",
      },
    );
    expect(run.status, run.stderr).toBe(0);
    const required = (await readFile(cacheLog, "utf8")).split("\n");
    expect(required.some((file) => file.includes("/node_modules/@lancedb/lancedb/"))).toBe(true);
    const arrow = required.filter((file) => file.includes("/node_modules/apache-arrow/"));
    expect(arrow.map((file) => file.replace(/.*\/apache-arrow\//, "")).sort()).toEqual([
      "Arrow.esnext.min.js",
      "Arrow.node.js", // the name LanceDB requires, in the module cache: the one-file build's exports
    ]);
    // examples/ has no .umbraignore or .cursorignore
    expect(required.filter((file) => /\/node_modules\/ignore\//.test(file))).toEqual([]);
  });

  it("imports no LanceDB to report the status", async () => {
    const urls = await imported(["status", "--root", root]);
    expect(urls.filter((url) => url.includes("/node_modules/@lancedb/"))).toEqual([]);
  });
});
