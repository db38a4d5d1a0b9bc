// @ts-check
/**
 * Real projects for the language-server benchmarks, laid out under bench/.work/lsp-projects/ (never
 * committed). Each comes with a mid-size file to edit and the one-line edits to make.
 */
import { execFileSync, execSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const PROJECTS = join(ROOT, "bench", ".work", "lsp-projects");
const MIRRORS = resolve(ROOT, "..", ".mirror");

/**
 * @typedef {object} Project
 * @property {string} language  registry id
 * @property {string} name      what it is, for the tables
 * @property {string} root      absolute path of the copy
 * @property {string} file      workspace-relative file to edit
 * @property {number} files     source files of this language in the project
 * @property {(i: number) => string} line   a one-line edit; it uses the undeclared name `undeclared(i)`
 * @property {(i: number) => string} undeclared
 */

/** @param {string} dir @param {(name: string) => boolean} keep @returns {number} */
function count(dir, keep) {
  let n = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    if (entry.isDirectory()) n += count(join(dir, entry.name), keep);
    else if (keep(entry.name)) n++;
  }
  return n;
}

/** @param {string} mirror @param {string} dest @param {string[]} [paths] */
function archive(mirror, dest, paths = []) {
  mkdirSync(dest, { recursive: true });
  execSync(
    `git --git-dir=${JSON.stringify(mirror)} archive HEAD ${paths.join(" ")} | tar -x -C ${JSON.stringify(dest)}`,
  );
}

/** umbra's own src/ and compiler options (~90 files), dependencies resolved through a node_modules link. */
export function typescriptProject() {
  const root = join(PROJECTS, "ts-umbra");
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  cpSync(join(ROOT, "src"), join(root, "src"), { recursive: true });
  const config = JSON.parse(readFileSync(join(ROOT, "tsconfig.json"), "utf8"));
  config.include = ["src"];
  config.compilerOptions.noEmit = true;
  writeFileSync(join(root, "tsconfig.json"), JSON.stringify(config, null, 2));
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: "umbra-copy", type: "module" }));
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  /** @type {Project} */
  const project = {
    language: "typescript",
    name: "umbra src/ (TypeScript)",
    root,
    file: "src/config/config.ts",
    files: count(join(root, "src"), (n) => n.endsWith(".ts")),
    undeclared: (i) => `notDeclared${i}`,
    line: (i) => `export const benchEdit${i} = ${i % 2 === 0 ? i : `notDeclared${i}`};`,
  };
  return project;
}

/** flask (or pytest) from the local git mirrors. */
export function pythonProject() {
  const candidates = [
    { mirror: "pallets+flask", file: "src/flask/helpers.py", name: "flask" },
    { mirror: "pytest-dev+pytest", file: "src/_pytest/pathlib.py", name: "pytest" },
  ];
  for (const { mirror, file, name } of candidates) {
    const git = join(MIRRORS, mirror, "repo");
    if (!existsSync(git)) continue;
    const root = join(PROJECTS, `py-${name}`);
    rmSync(root, { recursive: true, force: true });
    archive(git, root);
    /** @type {Project} */
    const project = {
      language: "python",
      name: `${name} (Python)`,
      root,
      file,
      files: count(root, (n) => n.endsWith(".py")),
      undeclared: (i) => `not_declared_${i}`,
      line: (i) => `bench_edit_${i} = ${i % 2 === 0 ? i : `not_declared_${i}`}`,
    };
    return project;
  }
  return undefined;
}

/** Go's own encoding/json (9 files, standard library imports only) as a module. */
export function goProject() {
  let goroot;
  try {
    goroot = execFileSync("go", ["env", "GOROOT"], { encoding: "utf8" }).trim();
  } catch {
    return undefined;
  }
  const source = join(goroot, "src", "encoding", "json");
  if (!existsSync(source)) return undefined;
  const root = join(PROJECTS, "go-json");
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  for (const name of readdirSync(source)) {
    if (name.endsWith(".go") && !name.endsWith("_test.go")) cpSync(join(source, name), join(root, name));
  }
  const version = execFileSync("go", ["env", "GOVERSION"], { encoding: "utf8" }).trim().replace(/^go/, "");
  writeFileSync(
    join(root, "go.mod"),
    `module example.com/json\n\ngo ${version.split(".").slice(0, 2).join(".")}\n`,
  );
  /** @type {Project} */
  const project = {
    language: "go",
    name: "Go encoding/json (Go)",
    root,
    file: "indent.go",
    files: count(root, (n) => n.endsWith(".go")),
    undeclared: (i) => `notDeclared${i}`,
    line: (i) => `var benchEdit${i} = ${i % 2 === 0 ? i : `notDeclared${i}`}`,
  };
  return project;
}

/** wcslib's C sources (from astropy's mirror), with a compile_commands.json. */
export function cProject() {
  const git = join(MIRRORS, "astropy+astropy", "repo");
  if (!existsSync(git)) return undefined;
  const root = join(PROJECTS, "c-wcslib");
  rmSync(root, { recursive: true, force: true });
  archive(git, root, ["cextern/wcslib/C"]);
  const dir = join(root, "cextern", "wcslib", "C");
  const commands = readdirSync(dir)
    .filter((name) => name.endsWith(".c"))
    .map((name) => ({ directory: dir, file: join(dir, name), arguments: ["cc", "-c", "-I", dir, name] }));
  writeFileSync(join(root, "compile_commands.json"), JSON.stringify(commands, null, 2));
  /** @type {Project} */
  const project = {
    language: "c",
    name: "wcslib (C)",
    root,
    file: "cextern/wcslib/C/lin.c",
    files: count(root, (n) => n.endsWith(".c") || n.endsWith(".h")),
    undeclared: (i) => `not_declared_${i}`,
    line: (i) => `int bench_edit_${i}(void) { return ${i % 2 === 0 ? i : `not_declared_${i}`}; }`,
  };
  return project;
}

/**
 * A fetched public repository (a bare git mirror under ../.mirror, brought by the session's `fetch`
 * tool; never committed) laid out under bench/.work/lsp-projects/, or undefined when it is absent.
 * @param {{ mirror: string, name: string, language: string, file: string, ext: RegExp,
 *   line: (i: number) => string, undeclared: (i: number) => string, paths?: string[] }} spec
 * @returns {Project | undefined}
 */
export function mirrorProject(spec) {
  const git = join(MIRRORS, spec.mirror, "repo");
  if (!existsSync(git)) return undefined;
  const root = join(PROJECTS, `${spec.language}-${spec.name}`);
  rmSync(root, { recursive: true, force: true });
  archive(git, root, spec.paths);
  return {
    language: spec.language,
    name: `${spec.name} (${spec.language})`,
    root,
    file: spec.file,
    files: count(root, (n) => spec.ext.test(n)),
    undeclared: spec.undeclared,
    line: spec.line,
  };
}

/** honojs/hono (TypeScript; its npm dependencies are not installed). */
export function honoProject() {
  return mirrorProject({
    mirror: "honojs+hono",
    name: "hono",
    language: "typescript",
    file: "src/hono-base.ts",
    ext: /\.tsx?$/,
    undeclared: (i) => `notDeclared${i}`,
    line: (i) => `export const benchEdit${i} = ${i % 2 === 0 ? i : `notDeclared${i}`};`,
  });
}

/** spf13/cobra (Go; its module dependencies are not downloaded, so gopls cannot load it fully). */
export function cobraProject() {
  return mirrorProject({
    mirror: "spf13+cobra",
    name: "cobra",
    language: "go",
    file: "command.go",
    ext: /\.go$/,
    undeclared: (i) => `notDeclared${i}`,
    line: (i) => `var benchEdit${i} = ${i % 2 === 0 ? i : `notDeclared${i}`}`,
  });
}

/** @param {number[]} xs @param {number} p */
export function percentile(xs, p) {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** Peak resident memory (VmHWM) of a process in MiB, or NaN. @param {number | undefined} pid */
export function peakRssMiB(pid) {
  if (pid === undefined) return Number.NaN;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
    return kb / 1024;
  } catch {
    return Number.NaN;
  }
}

/** Current resident memory (VmRSS) of a process and its descendants in MiB. @param {number | undefined} pid */
export function treeRssMiB(pid) {
  if (pid === undefined) return Number.NaN;
  let total = 0;
  const visit = (/** @type {number} */ p) => {
    try {
      total += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1] ?? 0);
      const children = readFileSync(`/proc/${p}/task/${p}/children`, "utf8").trim();
      for (const child of children ? children.split(/\s+/) : []) visit(Number(child));
    } catch {
      // gone
    }
  };
  visit(pid);
  return total / 1024;
}
