#!/usr/bin/env node
/**
 * Experiment (issue 15, measured and not kept; BENCHMARKS.md "Measured later the same day"): a prose leg —
 * BM25 over each chunk's comments, docstrings and names only (read from the checkout by line range,
 * stemmed) — ranked alone, beside BM25 over whole chunks, and fused after the fact (reciprocal rank,
 * k 20, weights W) with umbra's own hits, on the questions' development set.
 *
 *   node bench/questions/prose-leg.mjs [SET] [W,W,...]     (after `node bench/questions/run.mjs`)
 *
 * Reads run.mjs's index (its data dir for the default command); the working clones are checked out at the
 * set's pinned commits (cloned from ../.mirror when absent). SHOW=1 prints each question's ranks.
 */
import { readFileSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { loadConfig } from "../../dist/config/config.js";
import { workspaceDir } from "../../dist/config/paths.js";
import { openIndex } from "../../dist/index/open.js";
import { stem } from "../../dist/index/search/forms.js";
import { parseQuery } from "../../dist/index/search/query.js";
import { search } from "../../dist/index/search/searcher.js";
import { bm25Idf } from "../../dist/index/store/idf.js";
import { codeTokens, termFrequencies } from "../../dist/index/tokenize.js";
import { checkout, ensureClone } from "../lib/checkout.mjs";
import { foldToFiles } from "../retrieval/metrics.mjs";
import { umbraHome } from "./home.mjs";
import { aggregate, fileRank, symbolRank } from "./score.mjs";
import { loadSet } from "./set.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const work = join(ROOT, "bench", ".work");
const set = await loadSet(resolve(process.argv[2] || join(ROOT, "bench", "questions", "questions.json")));
const W = (process.argv[3] || "0.5,1,2").split(",").map(Number);
// run.mjs's data dir for its default command: the index it built is read
const home = umbraHome(work);
const env = { ...process.env, UMBRA_HOME: home, UMBRA_ENGINE: "off" };
const config = loadConfig({ env: {} });
/** Stemmed term counts of a text (the same stem for a question's words). */
const stemmedCounts = (text) => termFrequencies(codeTokens(text).map((t) => stem(t)));
function proseOf(lines, lang) {
  const out = [];
  let inDoc = false,
    q = "";
  for (const line of lines) {
    const t = line.trim();
    if (lang === "python") {
      if (inDoc) {
        out.push(t);
        if (t.includes(q)) inDoc = false;
        continue;
      }
      const m = t.match(/^[rRbBuU]?("""|''')/);
      if (m) {
        q = m[1];
        out.push(t);
        if (!(t.length > 3 && t.slice(3).includes(q))) inDoc = true;
        continue;
      }
      const h = line.indexOf("#");
      if (h >= 0 && !/["']/.test(line.slice(0, h))) out.push(line.slice(h + 1));
    } else {
      if (inDoc) {
        out.push(t);
        if (t.includes("*/")) inDoc = false;
        continue;
      }
      if (t.startsWith("/*")) {
        out.push(t);
        if (!t.includes("*/")) inDoc = true;
        continue;
      }
      const h = line.indexOf("//");
      if (h >= 0 && !/["'`]/.test(line.slice(0, h))) out.push(line.slice(h + 2));
    }
  }
  return out.join(" ");
}
const allRanks = { umbra: [], prose: [], bm25: [], ...Object.fromEntries(W.map((w) => [`fuse${w}`, []])) };
for (const repo of Object.keys(set.repos)) {
  const dir = await ensureClone({ mirrors: join(ROOT, "..", ".mirror"), work }, repo);
  await checkout(dir, set.repos[repo]?.commit ?? "");
  const qs = set.questions.filter((q) => q.repo === repo);
  const db = new Database(join(workspaceDir(realpathSync(dir), env), "index", "lexical.sqlite"), {
    readonly: true,
  });
  const chunks = db
    .prepare("select id, path, start_line, end_line, language, symbol, defines from chunks")
    .all();
  db.close();
  const fileCache = new Map();
  const docs = [];
  for (const c of chunks) {
    let lines = fileCache.get(c.path);
    if (!lines) {
      try {
        lines = readFileSync(join(dir, c.path), "utf8").split("\n");
      } catch {
        lines = [];
      }
      fileCache.set(c.path, lines);
    }
    const text = lines.slice(c.start_line - 1, c.end_line);
    const names = [c.symbol, ...c.defines.split("\n")]
      .filter(Boolean)
      .map((s) => s.split(" > ").at(-1))
      .join(" ");
    const prose = stemmedCounts(`${names} ${proseOf(text, c.language)}`);
    const whole = stemmedCounts(text.join("\n"));
    const length = (counts) => [...counts.values()].reduce((a, b) => a + b, 0);
    docs.push({ c, tf: prose, len: length(prose), tf2: whole, len2: length(whole) });
  }
  const mk = (key, lenKey) => {
    const df = new Map();
    let total = 0;
    for (const d of docs) {
      total += d[lenKey];
      for (const t of d[key].keys()) df.set(t, (df.get(t) ?? 0) + 1);
    }
    const avg = total / docs.length,
      N = docs.length;
    return (terms) =>
      docs
        .map((d) => {
          let s = 0;
          for (const [t, w] of terms) {
            const f = d[key].get(t);
            if (!f) continue;
            s += (w * bm25Idf(N, df.get(t)) * (f * 2.2)) / (f + 1.2 * (0.25 + (0.75 * d[lenKey]) / avg));
          }
          return { d, s };
        })
        .filter((x) => x.s > 0)
        .sort((a, b) => b.s - a.s)
        .slice(0, 200)
        .map((x) => x.d.c);
  };
  const proseRank = mk("tf", "len"),
    fullRank = mk("tf2", "len2");
  const index = await openIndex(dir, config, env);
  for (const q of qs) {
    const terms = new Map();
    for (const [t, w] of parseQuery(q.question).terms) {
      const s = stem(t);
      terms.set(s, Math.max(terms.get(s) ?? 0, w));
    }
    const toHit = (c) => ({ path: c.path, startLine: c.start_line, endLine: c.end_line });
    const p = proseRank(terms).map(toHit),
      b = fullRank(terms).map(toHit);
    const u = await search(index, q.question, { limit: 50 });
    const score = (hits) => ({
      repo,
      file: fileRank(foldToFiles(hits), q.answers),
      symbol: symbolRank(hits, q.answers),
    });
    const [ru, rp] = [score(u), score(p)];
    allRanks.umbra.push(ru);
    allRanks.prose.push(rp);
    allRanks.bm25.push(score(b));
    for (const w of W) {
      const m = new Map();
      const key = (h) => `${h.path}:${h.startLine}`;
      u.forEach((h, i) => {
        m.set(key(h), { h, s: 1 / (20 + i + 1) });
      });
      p.slice(0, 50).forEach((h, i) => {
        const k = key(h);
        const e = m.get(k);
        if (e) e.s += w / (20 + i + 1);
      });
      allRanks[`fuse${w}`].push(score([...m.values()].sort((a, b) => b.s - a.s).map((e) => e.h)));
    }
    if (process.env.SHOW) console.log(q.id, "umbra", ru.file, ru.symbol, "prose", rp.file, rp.symbol);
  }
  index.close();
}
for (const [k, rs] of Object.entries(allRanks)) {
  const m = aggregate(rs);
  console.log(
    k.padEnd(10),
    "file@1",
    m.file1.toFixed(3),
    "file@5",
    m.file5.toFixed(3),
    "sym@1",
    m.symbol1?.toFixed(3),
    "sym@5",
    m.symbol5?.toFixed(3),
  );
}
