#!/usr/bin/env node
// @ts-check
/**
 * Edit robustness on real hunks, next to `git apply` and `patch --fuzz=3` in the same run.
 *   Cases: single-hunk modifications of text files, from the history of local git mirrors (newest first,
 *   at most one file per commit, picked with the seed); the ground truth is the file at the parent commit
 *   (before) and at the commit (after), and every case is checked first by applying the clean hunk at its
 *   stated line with a strict applier written here.
 *   Perturbations, applied to the hunk (so to the patch, and to the search block and replacement derived
 *   from its old and new sides): clean; whitespace (trailing spaces on some context/removed lines, one
 *   doubled inner space); indentation (the whole hunk shifted by 4 spaces or a tab); tabs (leading tabs vs
 *   groups of 4 spaces swapped; left as is when no searched line changes); crlf (line endings flipped);
 *   line-numbers (@@ starts moved 5-40 lines);
 *   missing-context (one context line dropped: one with context on both sides, else the first line; a line
 *   next to the change is never dropped, since that moves the change); extra-context (a blank
 *   or duplicated line inserted among the context lines). @@ counts are recomputed so that the baselines
 *   are judged on placement, not on header arithmetic.
 *   Systems: umbra apply_patch (applyPatch), umbra edit (applyEdit; line numbers do not apply to it),
 *   git apply, patch -p1 --fuzz=3. Correct = the result equals the post-commit file byte for byte;
 *   wrong place = applied but different; refused = not applied.
 * Usage: node bench/edits/run.mjs [--hunks 600] [--seed 1] [--repos flask,pytest,...] [--case ID]
 *   (--case prints, for one case id of the JSON, each perturbed patch and how umbra's result differs.)
 * Needs `npx tsc -p tsconfig.build.json` first. Writes bench/out/edits.{json,md}.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createTwoFilesPatch } from "diff";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { applyEdit, applyPatch } = await import(join(ROOT, "dist/agent/edit/index.js"));

const { values } = parseArgs({
  options: {
    hunks: { type: "string", default: "600" },
    seed: { type: "string", default: "1" },
    repos: { type: "string", default: "" },
    case: { type: "string", default: "" },
  },
});
const HUNKS = Number(values.hunks);
const SEED = Number(values.seed);
const ALL_REPOS = [
  "pallets+flask",
  "pytest-dev+pytest",
  "sphinx-doc+sphinx",
  "pydata+xarray",
  "networkx+networkx",
  "pylint-dev+pylint",
  "sympy+sympy",
  "astropy+astropy",
];
const REPOS = values.repos
  ? ALL_REPOS.filter((r) => values.repos.split(",").some((x) => r.includes(x)))
  : ALL_REPOS;
const PERTURBATIONS = [
  "clean",
  "whitespace",
  "indentation",
  "tabs",
  "crlf",
  "line-numbers",
  "missing-context",
  "extra-context",
];
const SYSTEMS = ["umbra apply_patch", "umbra edit", "git apply", "patch --fuzz=3"];
const MAX_FILE = 1_000_000;
const MAX_HUNK_LINES = 120;

/** @param {number} seed */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
/** @param {string} s */
function hash(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * @typedef {{ k: " " | "-" | "+", t: string }} HLine
 * @typedef {{ oldStart: number, newStart: number, lines: HLine[], oldNoNl: boolean, newNoNl: boolean }} Hunk
 * @typedef {{ id: string, repo: string, commit: string, path: string, before: string, after: string, hunk: Hunk }} Case
 */

/** @param {string} gitDir @param {string[]} args */
function git(gitDir, args, input) {
  const r = spawnSync("git", ["--git-dir", gitDir, ...args], { input, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout;
}

/** Parses one file section of `git log -p` with a single hunk. @param {string} section */
function parseSection(section) {
  const lines = section.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  let path;
  let i = 0;
  for (; i < lines.length && !lines[i].startsWith("@@ "); i++) {
    const l = lines[i];
    if (/^(new file|deleted file|rename |copy |old mode|Binary files|GIT binary)/.test(l)) return undefined;
    if (l.startsWith("+++ ")) path = l.slice(4);
  }
  if (!path?.startsWith("b/") || path.includes('"')) return undefined;
  const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(lines[i] ?? "");
  if (!header) return undefined;
  /** @type {Hunk} */
  const hunk = {
    oldStart: Number(header[1]),
    newStart: Number(header[3]),
    lines: [],
    oldNoNl: false,
    newNoNl: false,
  };
  for (i++; i < lines.length; i++) {
    const l = lines[i];
    if (l.startsWith("@@ ")) return undefined; // more than one hunk
    const c = l[0];
    if (c === " " || c === "-" || c === "+") hunk.lines.push({ k: c, t: l.slice(1) });
    else if (c === "\\") {
      const last = hunk.lines[hunk.lines.length - 1];
      if (last && last.k !== "+") hunk.oldNoNl = true;
      if (last && last.k !== "-") hunk.newNoNl = true;
    } else return undefined;
  }
  if (hunk.lines.length === 0 || hunk.lines.length > MAX_HUNK_LINES) return undefined;
  return { path: path.slice(2), hunk };
}

/** Strict reference applier: the hunk at its stated line, exactly. @param {string} before @param {Hunk} h */
function strictApply(before, h) {
  const parts = before.split("\n");
  const endsNl = before.endsWith("\n");
  if (endsNl) parts.pop();
  const oldSide = h.lines.filter((l) => l.k !== "+").map((l) => l.t);
  const newSide = h.lines.filter((l) => l.k !== "-").map((l) => l.t);
  const start = oldSide.length === 0 ? h.oldStart : h.oldStart - 1;
  for (let j = 0; j < oldSide.length; j++) if (parts[start + j] !== oldSide[j]) return undefined;
  const atEnd = start + oldSide.length === parts.length;
  if (atEnd && h.oldNoNl === endsNl) return undefined;
  parts.splice(start, oldSide.length, ...newSide);
  const nl = atEnd ? !h.newNoNl : endsNl;
  return parts.join("\n") + (nl && parts.length > 0 ? "\n" : "");
}

function collectCases() {
  /** @type {Case[]} */
  const cases = [];
  const perRepo = Math.ceil(HUNKS / REPOS.length);
  for (const repo of REPOS) {
    const gitDir = `/work/.mirror/${repo}/repo`;
    const pick = rng(SEED ^ hash(repo));
    const picked = [];
    const raw = git(gitDir, [
      "log",
      "--no-merges",
      "-p",
      "-U3",
      "--no-renames",
      "--no-color",
      "--no-ext-diff",
      "--no-textconv",
      "--diff-filter=M",
      "--format=%x00COMMIT %H %P",
      "-n",
      String(perRepo * 4),
    ]).toString("utf8");
    for (const chunk of raw.split("\0COMMIT ").slice(1)) {
      const nl = chunk.indexOf("\n");
      const [commit, parent] = chunk.slice(0, nl).split(" ");
      if (!commit || !parent) continue;
      const sections = chunk
        .slice(nl + 1)
        .split(/^diff --git /m)
        .slice(1)
        .map(parseSection)
        .filter((s) => s !== undefined);
      if (sections.length === 0) continue;
      const s = sections[Math.floor(pick() * sections.length)];
      picked.push({ commit, parent, ...s });
    }
    // Blobs through one cat-file process.
    const specs = picked.flatMap((p) => [`${p.parent}:${p.path}`, `${p.commit}:${p.path}`]);
    const out = git(gitDir, ["cat-file", "--batch"], `${specs.join("\n")}\n`);
    /** @type {(Buffer | undefined)[]} */
    const blobs = [];
    let pos = 0;
    for (let k = 0; k < specs.length; k++) {
      const eol = out.indexOf(10, pos);
      const head = out.subarray(pos, eol).toString();
      const m = /^\S+ blob (\d+)$/.exec(head);
      if (!m) {
        blobs.push(undefined);
        pos = eol + 1;
        continue;
      }
      const size = Number(m[1]);
      blobs.push(out.subarray(eol + 1, eol + 1 + size));
      pos = eol + 1 + size + 1;
    }
    let taken = 0;
    for (const [k, p] of picked.entries()) {
      if (taken >= perRepo || cases.length >= HUNKS) break;
      const b = blobs[2 * k];
      const a = blobs[2 * k + 1];
      if (!b || !a || b.length > MAX_FILE || b.includes(0)) continue;
      const before = b.toString("utf8");
      const after = a.toString("utf8");
      if (!Buffer.from(before).equals(b) || !Buffer.from(after).equals(a)) continue; // not UTF-8
      if (strictApply(before, p.hunk) !== after) continue;
      cases.push({
        id: `${repo}@${p.commit.slice(0, 10)}:${p.path}`,
        repo,
        commit: p.commit,
        path: p.path,
        before,
        after,
        hunk: p.hunk,
      });
      taken++;
    }
  }
  return cases;
}

/** @param {Hunk} h @returns {Hunk} */
const cloneHunk = (h) => ({ ...h, lines: h.lines.map((l) => ({ ...l })) });

/** @param {Hunk} h0 @param {string} kind @param {() => number} r @returns {Hunk} */
function perturb(h0, kind, r) {
  const h = cloneHunk(h0);
  const ctx = () => h.lines.map((l, i) => (l.k === " " ? i : -1)).filter((i) => i >= 0);
  const ri = (n) => Math.floor(r() * n);
  switch (kind) {
    case "whitespace": {
      const quoted = h.lines.map((l, i) => (l.k !== "+" && l.t.trim() !== "" ? i : -1)).filter((i) => i >= 0);
      let touched = 0;
      for (const i of quoted) {
        if (r() < 0.4) {
          h.lines[i].t += r() < 0.5 ? " " : "  ";
          touched++;
        }
      }
      if (touched === 0 && quoted.length > 0) h.lines[quoted[ri(quoted.length)]].t += " ";
      const inner = quoted.filter((i) => / \S/.test(h.lines[i].t.trim()));
      if (inner.length > 0) {
        const l = h.lines[inner[ri(inner.length)]];
        const ws = /^\s*/.exec(l.t)?.[0] ?? "";
        l.t = ws + l.t.slice(ws.length).replace(/ (?=\S)/, "  ");
      }
      return h;
    }
    case "indentation": {
      const nonBlank = h.lines.filter((l) => l.t.trim() !== "");
      const tabbed = nonBlank.some((l) => l.t.startsWith("\t"));
      const unit = tabbed ? "\t" : "    ";
      const canStrip = nonBlank.length > 0 && nonBlank.every((l) => l.t.startsWith(unit));
      for (const l of h.lines) {
        if (l.t.trim() === "") continue;
        l.t = canStrip ? l.t.slice(unit.length) : unit + l.t;
      }
      return h;
    }
    case "tabs": {
      const tabbed = h.lines.some((l) => /^ *\t/.test(l.t));
      for (const l of h.lines) {
        const ws = /^[ \t]*/.exec(l.t)?.[0] ?? "";
        const rest = l.t.slice(ws.length);
        l.t = (tabbed ? ws.replace(/\t/g, "    ") : ws.replace(/ {4}/g, "\t")) + rest;
      }
      // When no searched line changed, nothing tells a tool how the file is indented: the new lines would
      // simply be different content. Such hunks stay as they are.
      const oldSide = (x) =>
        x.lines
          .filter((l) => l.k !== "+")
          .map((l) => l.t)
          .join("\n");
      return oldSide(h) === oldSide(h0) ? cloneHunk(h0) : h;
    }
    case "crlf": {
      const isCrlf = h.lines.length > 0 && h.lines.every((l) => l.t.endsWith("\r"));
      for (const l of h.lines) l.t = isCrlf ? l.t.replace(/\r$/, "") : `${l.t}\r`;
      return h;
    }
    case "line-numbers": {
      const d = (5 + ri(36)) * (r() < 0.5 ? -1 : 1);
      const shift = h.oldStart + d < 1 ? Math.abs(d) : d;
      h.oldStart += shift;
      h.newStart += shift;
      return h;
    }
    case "missing-context": {
      const c = ctx();
      const interior = c.filter((i) => h.lines[i - 1]?.k === " " && h.lines[i + 1]?.k === " ");
      // Dropping a line next to the change would move the change: the patch would mean something else.
      const pool = interior.length > 0 ? interior : h.lines[0]?.k === " " && h.lines.length > 1 ? [0] : [];
      if (pool.length === 0) return h;
      h.lines.splice(pool[ri(pool.length)], 1);
      return h;
    }
    case "extra-context": {
      const c = ctx();
      const gaps = c.filter((i) => h.lines[i + 1]?.k === " ").map((i) => i + 1);
      const pool = gaps.length > 0 ? gaps : c.map((i) => i + 1).filter((i) => i < h.lines.length);
      if (pool.length === 0) return h;
      const at = pool[ri(pool.length)];
      const prev = h.lines[at - 1];
      const next = h.lines[at];
      const text = prev.t.trim() !== "" && (next?.t.trim() ?? "") !== "" ? "" : prev.t;
      h.lines.splice(at, 0, { k: " ", t: text });
      return h;
    }
    default:
      return h;
  }
}

/** @param {string} path @param {Hunk} h @param {boolean} crlf */
function patchText(path, h, crlf) {
  const oldN = h.lines.filter((l) => l.k !== "+").length;
  const newN = h.lines.filter((l) => l.k !== "-").length;
  const out = [`diff --git a/${path} b/${path}`, `--- a/${path}`, `+++ b/${path}`];
  out.push(`@@ -${h.oldStart},${oldN} +${h.newStart},${newN} @@`);
  let lastOld = -1;
  let lastNew = -1;
  h.lines.forEach((l, i) => {
    if (l.k !== "+") lastOld = i;
    if (l.k !== "-") lastNew = i;
  });
  const eol = crlf ? "\r" : "";
  h.lines.forEach((l, i) => {
    // A CRLF file's lines already carry their \r; headers get one when the whole patch is CRLF.
    out.push(l.k + l.t);
    if ((i === lastOld && h.oldNoNl) || (i === lastNew && h.newNoNl))
      out.push(`\\ No newline at end of file${eol}`);
  });
  return `${out.map((l, i) => (i < 4 && crlf ? `${l}\r` : l)).join("\n")}\n`;
}

let scratchCount = 0;
const SCRATCH = mkdtempSync(join(tmpdir(), "umbra-edits-"));
/** @param {string[]} cmd @param {string} path @param {string} before @param {string} patch */
function external(cmd, path, before, patch) {
  const dir = join(SCRATCH, String(scratchCount++));
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), before);
  writeFileSync(join(dir, "..", `${scratchCount}.diff`), patch);
  const r = spawnSync(cmd[0], [...cmd.slice(1), join(dir, "..", `${scratchCount}.diff`)], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, GIT_CEILING_DIRECTORIES: SCRATCH, LC_ALL: "C" },
  });
  let result;
  if (r.status === 0) {
    try {
      result = readFileSync(join(dir, path), "utf8");
    } catch {
      result = undefined;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  rmSync(join(dir, "..", `${scratchCount}.diff`), { force: true });
  return result;
}

/** @param {Case} c @param {Hunk} h @param {string} kind */
function runSystems(c, h, kind) {
  const crlfPatch = kind === "crlf" && h.lines.every((l) => l.t.endsWith("\r"));
  const patch = patchText(c.path, h, crlfPatch);
  /** @type {Record<string, {applied: boolean, text?: string, stage?: string, message?: string}>} */
  const res = {};
  const t0 = performance.now();
  const p = applyPatch(patch, (q) => (q === c.path ? c.before : undefined));
  const tPatch = performance.now() - t0;
  const f = p.files[0];
  res["umbra apply_patch"] = { applied: p.ok, text: f?.text, stage: f?.hunks[0]?.stage, message: f?.message };
  let tEdit = 0;
  if (kind !== "line-numbers") {
    const oldSide = h.lines.filter((l) => l.k !== "+").map((l) => l.t);
    const newSide = h.lines.filter((l) => l.k !== "-").map((l) => l.t);
    const search = oldSide.join("\n") + (h.oldNoNl || oldSide.length === 0 ? "" : "\n");
    const replace = newSide.join("\n") + (h.newNoNl || newSide.length === 0 ? "" : "\n");
    const t1 = performance.now();
    const e = applyEdit(c.before, search, replace);
    tEdit = performance.now() - t1;
    res["umbra edit"] = e.ok
      ? { applied: true, text: e.text, stage: e.stage }
      : { applied: false, stage: e.reason, message: e.message };
  }
  const g = external(["git", "apply", "--whitespace=nowarn"], c.path, c.before, patch);
  res["git apply"] = { applied: g !== undefined, text: g };
  const pt = external(
    ["patch", "-p1", "--fuzz=3", "--batch", "--forward", "--no-backup-if-mismatch", "-r", "-", "-s", "-i"],
    c.path,
    c.before,
    patch,
  );
  res["patch --fuzz=3"] = { applied: pt !== undefined, text: pt };
  return { res, tPatch, tEdit };
}

const started = performance.now();
const cases = collectCases();
const collectS = (performance.now() - started) / 1000;
console.error(`${cases.length} cases from ${REPOS.length} repositories in ${collectS.toFixed(1)} s`);

/** @type {Record<string, Record<string, {n: number, correct: number, wrong: number, refused: number, stages: Record<string, number>}>>} */
const table = {};
const wrongPlaces = [];
const refusals = [];
const umbraMs = { patch: 0, edit: 0 };
let unchanged = 0;
for (const kind of PERTURBATIONS) {
  table[kind] = {};
  for (const s of SYSTEMS) table[kind][s] = { n: 0, correct: 0, wrong: 0, refused: 0, stages: {} };
}
for (const c of cases) {
  for (const kind of PERTURBATIONS) {
    const r = rng(SEED ^ hash(`${c.id}|${kind}`));
    const h = perturb(c.hunk, kind, r);
    if (kind !== "clean" && JSON.stringify(h) === JSON.stringify(c.hunk)) unchanged++;
    const { res, tPatch, tEdit } = runSystems(c, h, kind);
    umbraMs.patch += tPatch;
    umbraMs.edit += tEdit;
    if (values.case === c.id) {
      console.error(`=== ${kind}\n${patchText(c.path, h, false)}`);
      for (const sys of ["umbra apply_patch", "umbra edit"]) {
        const o = res[sys];
        if (o?.applied && o.text !== c.after)
          console.error(
            `${sys} (${o.stage}):\n${createTwoFilesPatch("expected", "got", c.after, o.text ?? "")}`,
          );
      }
    }
    for (const [sys, o] of Object.entries(res)) {
      const cell = table[kind][sys];
      cell.n++;
      if (o.stage) cell.stages[o.stage] = (cell.stages[o.stage] ?? 0) + 1;
      if (!o.applied) {
        cell.refused++;
        if (sys.startsWith("umbra")) {
          refusals.push({ system: sys, perturbation: kind, case: c.id, message: o.message?.slice(0, 400) });
        }
      } else if (o.text === c.after) cell.correct++;
      else {
        cell.wrong++;
        if (sys.startsWith("umbra"))
          wrongPlaces.push({ system: sys, perturbation: kind, case: c.id, stage: o.stage });
      }
    }
  }
}
rmSync(SCRATCH, { recursive: true, force: true });

const pct = (x, n) => (n === 0 ? "—" : `${((100 * x) / n).toFixed(1)}%`);
const md = [];
md.push(`# Edit robustness on real hunks`);
md.push("");
md.push(
  `${cases.length} single-hunk modifications from ${REPOS.map((r) => r.split("+")[1]).join(", ")} ` +
    `(${cases.map((c) => c.repo).filter((v, i, a) => a.indexOf(v) === i).length} repositories), seed ${SEED}, ` +
    `${PERTURBATIONS.length} perturbations. Command: \`node bench/edits/run.mjs --hunks ${HUNKS} --seed ${SEED}\`.`,
);
md.push("");
md.push("| perturbation | system | n | correct | wrong place | refused |");
md.push("|---|---|---:|---:|---:|---:|");
for (const kind of PERTURBATIONS) {
  for (const s of SYSTEMS) {
    const c = table[kind][s];
    if (c.n === 0) {
      md.push(`| ${kind} | ${s} | — | n/a | | |`);
      continue;
    }
    md.push(`| ${kind} | ${s} | ${c.n} | ${pct(c.correct, c.n)} | ${c.wrong} | ${c.refused} |`);
  }
}
md.push("");
md.push("| system (all perturbations) | n | correct | wrong place | refused |");
md.push("|---|---:|---:|---:|---:|");
const totals = {};
for (const s of SYSTEMS) {
  const t = { n: 0, correct: 0, wrong: 0, refused: 0 };
  for (const kind of PERTURBATIONS) {
    const c = table[kind][s];
    t.n += c.n;
    t.correct += c.correct;
    t.wrong += c.wrong;
    t.refused += c.refused;
  }
  totals[s] = t;
  md.push(`| ${s} | ${t.n} | ${pct(t.correct, t.n)} | ${t.wrong} | ${t.refused} |`);
}
md.push("");
md.push("Stages used by umbra (applied or refusal reason), summed over perturbations:");
md.push("");
for (const s of ["umbra apply_patch", "umbra edit"]) {
  const st = {};
  for (const kind of PERTURBATIONS)
    for (const [k, v] of Object.entries(table[kind][s].stages)) st[k] = (st[k] ?? 0) + v;
  md.push(
    `- ${s}: ${Object.entries(st)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  );
}
md.push("");
md.push(
  `umbra time: apply_patch ${(umbraMs.patch / (cases.length * PERTURBATIONS.length)).toFixed(2)} ms per hunk, ` +
    `edit ${(umbraMs.edit / (cases.length * (PERTURBATIONS.length - 1))).toFixed(2)} ms. ` +
    `${unchanged} perturbed hunks came out unchanged (nothing to perturb) and are counted as they are.`,
);
const text = md.join("\n");
console.log(text);
if (wrongPlaces.length > 0)
  console.error("umbra wrong places:", JSON.stringify(wrongPlaces.slice(0, 20), null, 1));
mkdirSync(join(ROOT, "bench/out"), { recursive: true });
writeFileSync(join(ROOT, "bench/out/edits.md"), `${text}\n`);
writeFileSync(
  join(ROOT, "bench/out/edits.json"),
  `${JSON.stringify(
    {
      hunks: HUNKS,
      seed: SEED,
      repos: REPOS,
      cases: cases.map((c) => ({ id: c.id, lines: c.hunk.lines.length, oldStart: c.hunk.oldStart })),
      perturbations: PERTURBATIONS,
      table,
      totals,
      umbraWrongPlaces: wrongPlaces,
      umbraRefusals: refusals,
      unchangedPerturbations: unchanged,
      seconds: { collect: collectS, total: (performance.now() - started) / 1000 },
    },
    null,
    1,
  )}\n`,
);
