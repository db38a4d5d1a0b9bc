#!/usr/bin/env node
// @ts-check
/**
 * Setup cost of hidden files in `umbra run`. For each count (10, 1,000, 10,000 and 100,000 files that a
 * workspace's .umbraignore hides, in data/ beside a README and a small src/), measures in the same run,
 * interleaved, medians of --runs (default 5):
 *   - umbra: `umbra run --root WS -- true` through the built CLI (dist/cli/main.js: the product path, with
 *     the workspace walk that finds the matches, the policy, the helper and its mounts);
 *   - bwrap: bubblewrap doing the equivalent: the same namespaces, / read-only, the workspace read-write,
 *     and each hidden file covered with `--ro-bind /dev/null FILE` (its way to hide a file), the
 *     arguments passed through `--args 0` (a command line cannot hold 100,000 of them; bwrap itself takes
 *     at most 9,000 arguments); the list is given, not searched for;
 *   - the sandbox alone: runSandboxed(policy, "true") in this process with the policy of the workspace
 *     resolved once (the helper and its mounts, without the CLI's start-up and the workspace walk);
 *   - bwrap-folder: bubblewrap covering the whole data/ folder with one tmpfs instead (one mount, and
 *     the README goes too: not the same, but what one mount costs, the floor);
 *   - the mounts each makes inside (lines of /proc/self/mountinfo beyond those of the 10-file workspace).
 * Also `umbra --version`, the CLI's own start-up, for reference. Setup = wall time of running `true`;
 * CPU = user + system seconds of the whole process tree (from /usr/bin/time), which a loaded machine
 * disturbs less than wall time.
 * The walk that finds the matches is cached per folder in the data directory: the first run of each
 * workspace (cache cold) is reported apart, the medians are of the runs after it. Also `umbra run` in a
 * workspace whose data/ holds --visible files (default 100,000) that nothing hides.
 * Usage: node bench/hidden/run.mjs [--runs 5] [--counts 10,1000,10000,100000] [--visible 100000].
 * Needs `npm run build`.
 * Writes bench/out/hidden.{json,md} and prints the markdown table.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const ROOT = join(import.meta.dirname, "..", "..");
const { runSandboxed } = await import(join(ROOT, "dist", "sandbox", "run.js"));
const { resolvePolicy } = await import(join(ROOT, "dist", "sandbox", "policy.js"));
const { loadConfig } = await import(join(ROOT, "dist", "config", "config.js"));
const CLI = join(ROOT, "dist", "cli", "main.js");
const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    counts: { type: "string", default: "10,1000,10000,100000" },
    visible: { type: "string", default: "100000" },
  },
});
const RUNS = Math.max(3, Number(values.runs));
const COUNTS = String(values.counts).split(",").map(Number);
const VISIBLE = String(values.visible).split(",").filter(Boolean).map(Number);
const BWRAP = spawnSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).stdout.trim();

const base = realpathSync(mkdtempSync(join(tmpdir(), "umbra-bench-hidden-")));
const env = { ...process.env, UMBRA_HOME: join(base, "home"), XDG_CONFIG_HOME: join(base, "config") };

/** A workspace whose .umbraignore hides `count` files of data/ (`visible`: data/ holds `count` files
 * that it does not match, the case of a big folder with nothing to hide). */
function workspace(count, visible = false) {
  const ws = join(base, `ws-${count}${visible ? "-visible" : ""}`);
  mkdirSync(join(ws, "data"), { recursive: true });
  mkdirSync(join(ws, "src"));
  writeFileSync(join(ws, ".umbraignore"), "data/*.csv\n");
  writeFileSync(join(ws, "data", "README.md"), "what the data is\n");
  for (let i = 0; i < 10; i++) writeFileSync(join(ws, "src", `m${i}.ts`), `export const m${i} = ${i};\n`);
  const hidden = [];
  for (let i = 0; i < count; i++) {
    const path = join(ws, "data", `row${i}.${visible ? "txt" : "csv"}`);
    writeFileSync(path, "secret\n");
    if (!visible) hidden.push(path);
  }
  return { ws, hidden, visible };
}

/** bwrap's options for the workspace, NUL-separated, for --args: each of `covered` hidden. */
function bwrapList(ws, covered, cover) {
  const args = ["--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"];
  args.push("--die-with-parent", "--ro-bind", "/", "/", "--tmpfs", "/tmp", "--bind", ws, ws);
  for (const path of covered) args.push(...cover(path));
  args.push("--proc", "/proc", "--dev", "/dev", "--chdir", ws);
  return Buffer.from(args.map((arg) => `${arg}\0`).join(""));
}
const perFile = (w) => bwrapList(w.ws, w.hidden, (path) => ["--ro-bind", "/dev/null", path]);
const wholeFolder = (w) => bwrapList(w.ws, [join(w.ws, "data")], (path) => ["--tmpfs", path]);

/** Runs argv under /usr/bin/time; returns {ms, cpu (s), ok, stdout, stderr}. */
function time(argv, input) {
  const started = performance.now();
  const r = spawnSync("/usr/bin/time", ["-f", "cpu %U %S", ...argv], {
    env,
    input,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    stdio: input === undefined ? ["ignore", "pipe", "pipe"] : ["pipe", "pipe", "pipe"],
  });
  const ms = performance.now() - started;
  const stderr = r.stderr ?? "";
  const m = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(stderr);
  const cpu = m ? Number(m[1]) + Number(m[2]) : Number.NaN;
  return {
    ms,
    cpu,
    ok: r.status === 0,
    stdout: r.stdout ?? "",
    stderr: stderr.replace(/cpu [\d.]+ [\d.]+\s*$/, ""),
  };
}

const umbra = (ws, cmd) => [process.execPath, CLI, "run", "--root", ws, "--", ...cmd];
// bwrap reads its options from stdin (fd 0) with --args 0; the command gets no stdin.
const bwrap = (cmd) => [BWRAP, "--args", "0", "--", ...cmd];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const MOUNTS = ["sh", "-c", "grep -c . /proc/self/mountinfo"];
const rows = [];
const visibleRows = [];
const workspaces = [];
/** How many files of data/ the policy hides: listed one by one, or all but the kept ones of a mask. */
function hiddenInData(policy, ws) {
  const data = join(ws, "data");
  const mask = (policy.hiddenMasks ?? []).find((m) => m.folder === data);
  const masked = mask ? readdirSync(data).filter((name) => !mask.keep.includes(name)).length : 0;
  return masked + policy.hiddenPaths.filter((path) => path.startsWith(`${data}/`)).length;
}
for (const [count, visible] of [...COUNTS.map((c) => [c, false]), ...VISIBLE.map((c) => [c, true])]) {
  const w = workspace(count, visible);
  const config = loadConfig({ workspaceRoot: w.ws, env }).sandbox;
  const { policy } = await resolvePolicy({ workspace: w.ws, config, env });
  const found = hiddenInData(policy, w.ws);
  if (found !== w.hidden.length) throw new Error(`${found} hidden, not ${w.hidden.length}`);
  // each workspace's first run (the cache of its walk cold) is its own column
  rmSync(join(env.UMBRA_HOME, "sandbox", "walk"), { recursive: true, force: true });
  workspaces.push({ count, policy, key: `${count}${visible ? "v" : ""}`, ...w });
}
const samples = new Map(
  workspaces.map((w) => [
    w.key,
    { umbra: [], umbraCpu: [], alone: [], bwrap: [], bwrapError: "", folder: [] },
  ]),
);
const version = [];
const versionCpu = [];
for (let run = 0; run < RUNS; run++) {
  const v = time([process.execPath, CLI, "--version"]);
  version.push(v.ms);
  versionCpu.push(v.cpu * 1000);
  for (const w of workspaces) {
    const s = samples.get(w.key);
    const u = time(umbra(w.ws, ["true"]));
    if (!u.ok) throw new Error(`umbra run failed with ${w.count} hidden files: ${u.stderr}`);
    s.umbra.push(u.ms);
    s.umbraCpu.push(u.cpu * 1000);
    if (w.visible) continue;
    const started = performance.now();
    const a = await runSandboxed(w.policy, "true", []);
    if (a.exitCode !== 0) throw new Error(`the sandbox failed with ${w.count} hidden files: ${a.stderr}`);
    s.alone.push(performance.now() - started);
    if (!BWRAP) continue;
    if (!s.bwrapError) {
      const b = time(bwrap(["true"]), perFile(w));
      if (b.ok) s.bwrap.push(b.ms);
      else
        s.bwrapError =
          b.stderr
            .split("\n")
            .filter((line) => line.trim() && !line.startsWith("Command exited"))
            .pop() ?? "failed";
    }
    s.folder.push(time(bwrap(["true"]), wholeFolder(w)).ms);
  }
}
for (const w of workspaces) {
  const s = samples.get(w.key);
  if (w.visible) {
    visibleRows.push({
      files: w.count,
      firstMs: s.umbra[0],
      firstCpuMs: s.umbraCpu[0],
      umbraMs: median(s.umbra.slice(1)),
      umbraCpuMs: median(s.umbraCpu.slice(1)),
    });
    continue;
  }
  const mounts = Number(time(umbra(w.ws, MOUNTS)).stdout.trim());
  const bm = BWRAP && !s.bwrapError ? Number(time(bwrap(MOUNTS), perFile(w)).stdout.trim()) : Number.NaN;
  rows.push({
    hidden: w.count,
    firstMs: s.umbra[0],
    umbraMs: median(s.umbra.slice(1)),
    umbraCpuMs: median(s.umbraCpu.slice(1)),
    aloneMs: median(s.alone),
    bwrapMs: s.bwrap.length ? median(s.bwrap) : null,
    bwrapFolderMs: s.folder.length ? median(s.folder) : null,
    bwrapError: s.bwrapError || null,
    umbraMounts: mounts,
    bwrapMounts: Number.isNaN(bm) ? null : bm,
  });
}
const first = rows[0];
const fmt = (ms) => (ms === null ? "—" : `${ms.toFixed(0)} ms`);
const lines = [
  `| hidden files | umbra run -- true | × the ${first.hidden}-file case | umbra CPU | first run (walk not cached) | the sandbox alone | mounts inside (umbra) | bwrap, a mount per file | mounts inside (bwrap) | bwrap, one tmpfs over data/ |`,
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ...rows.map(
    (r) =>
      `| ${r.hidden.toLocaleString("en")} | ${fmt(r.umbraMs)} | ${(r.umbraMs / first.umbraMs).toFixed(2)} | ${fmt(r.umbraCpuMs)} | ${fmt(r.firstMs)} | ${fmt(r.aloneMs)} | ${r.umbraMounts} | ${r.bwrapError ? `fails: ${r.bwrapError}` : fmt(r.bwrapMs)} | ${r.bwrapMounts ?? "—"} | ${fmt(r.bwrapFolderMs)} |`,
  ),
  "",
  ...(visibleRows.length
    ? [
        "| files in data/, none hidden | umbra run -- true | umbra CPU | first run (walk not cached) | its CPU |",
        "| --- | --- | --- | --- | --- |",
        ...visibleRows.map(
          (r) =>
            `| ${r.files.toLocaleString("en")} | ${fmt(r.umbraMs)} | ${fmt(r.umbraCpuMs)} | ${fmt(r.firstMs)} | ${fmt(r.firstCpuMs)} |`,
        ),
        "",
      ]
    : []),
  `umbra --version (the CLI's start-up alone): ${fmt(median(version))}, CPU ${fmt(median(versionCpu))}; medians of ${RUNS} runs, interleaved (umbra run: of the runs after the first).`,
];
const md = lines.join("\n");
mkdirSync(join(ROOT, "bench", "out"), { recursive: true });
writeFileSync(
  join(ROOT, "bench", "out", "hidden.json"),
  JSON.stringify(
    { runs: RUNS, version: median(version), versionCpu: median(versionCpu), rows, visibleRows },
    null,
    2,
  ),
);
writeFileSync(join(ROOT, "bench", "out", "hidden.md"), `${md}\n`);
console.log(md);
rmSync(base, { recursive: true, force: true });
