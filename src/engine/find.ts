import { cleanPath } from "../agent/tools/types.js";
import type { IntentKind } from "../index/search/intent.js";
import { search } from "../index/search/searcher.js";
import type { BranchFiles } from "../shadow/index.js";
import { FileAccessError, shownPath } from "../workspace/errors.js";
import { parseRipgrep, ripgrepArgs, grep as userGrep } from "../workspace/grep.js";
import { readIfRegular } from "../workspace/rooted.js";
import { hardLinksToHidden } from "../workspace/scan.js";
import type { GrepResult, SearchResult } from "./api.js";
import { EngineError } from "./errors.js";
import type { Handler } from "./operations.js";
import type { FileLines } from "./previews.js";
import type { Workspace } from "./workspaces.js";

/** The operations that find code: search over the index, grep over the files; both through the door. */

const PREVIEW_LINES = 4;

/**
 * Which of `paths` the file door lets an agent see: it refuses another name of a hidden file that the
 * ignore rules alone do not catch (a hard link to a credential outside the workspace, ~/.ssh/id_rsa).
 */
async function visibleThroughDoor(files: BranchFiles, paths: Iterable<string>): Promise<Set<string>> {
  const seen = await Promise.all(
    [...new Set(paths)].map((path) =>
      files.resolve(path).then(
        () => path,
        (error: unknown) => {
          if (error instanceof FileAccessError) return undefined;
          throw error;
        },
      ),
    ),
  );
  return new Set(seen.filter((path) => path !== undefined));
}

/**
 * The text of each file that search hits name, as it is now; a file the agent may not see (hidden since
 * it was indexed, another name of a hidden file, behind a link out of the workspace) is left out. Files
 * unchanged since the last search come from the workspace's preview cache (search() has just checked
 * the ignore rules as they are now; the hidden files' other names are checked here); the rest are read
 * through the file door's rules, side by side (a read opens every folder on the way, one after another).
 */
async function previewTexts(ws: Workspace, root: string, paths: string[]): Promise<Map<string, FileLines>> {
  const texts = new Map<string, FileLines>();
  const links = await hardLinksToHidden(root, paths);
  const misses: { path: string; key: string | undefined }[] = [];
  for (const path of paths) {
    if (links.has(path)) continue;
    const key = ws.previews.identity(path);
    const kept = ws.previews.get(path, key);
    if (kept === undefined) misses.push({ path, key });
    else texts.set(path, kept);
  }
  if (misses.length === 0) return texts;
  const files = await ws.folderFiles();
  const [door, read] = await Promise.all([
    visibleThroughDoor(
      files,
      misses.map((miss) => miss.path),
    ),
    // never through a link: the file may have become one to something outside since it was indexed
    Promise.all(misses.map(async ({ path }) => (await readIfRegular(root, path))?.toString("utf8") ?? "")),
  ]);
  misses.forEach(({ path, key }, i) => {
    if (!door.has(path)) return;
    texts.set(path, ws.previews.set(path, key, read[i] ?? ""));
  });
  return texts;
}

export const searchOp: Handler<"search"> = async (ws, p, _caller, call) =>
  ws.withIndex(p.build, call, async (index): Promise<SearchResult> => {
    let intent: IntentKind = "question";
    const hits = await search(index, p.query, {
      limit: p.limit,
      onIntent: (read) => {
        intent = read.kind;
      },
      ...(p.path ? { pathGlob: p.path } : {}),
      ...(p.lang ? { language: p.lang } : {}),
    });
    const texts = await previewTexts(ws, index.root, [...new Set(hits.map((hit) => hit.path))]);
    const shown = [];
    for (const hit of hits) {
      const file = texts.get(hit.path);
      if (file === undefined) continue;
      const preview = file.lines(hit.startLine, Math.min(hit.endLine, hit.startLine + PREVIEW_LINES - 1));
      shown.push({
        path: hit.path,
        startLine: hit.startLine,
        endLine: hit.endLine,
        score: hit.score,
        ...(hit.symbol ? { symbol: hit.symbol } : {}),
        ...(hit.defines.length > 0 ? { defines: hit.defines } : {}),
        stale: hit.stale,
        preview,
      });
    }
    return { hits: shown, index: ws.freshness(index), intent };
  });

export const grepOp: Handler<"grep"> = async (ws, p) => {
  let below: string | undefined;
  if (p.path) {
    below = cleanPath(p.path, ws.root);
    if (below === undefined)
      throw new EngineError("REFUSED", `${shownPath(p.path)} is outside the workspace`);
  }
  const options = { fixed: p.fixed, ignoreCase: p.ignoreCase, ...(below ? { below } : {}) };
  const cut = async (matches: GrepResult["matches"], files: BranchFiles): Promise<GrepResult> => {
    const door = await visibleThroughDoor(
      files,
      matches.map((match) => match.path),
    );
    const visible = matches.filter((match) => door.has(match.path));
    return { matches: visible.slice(0, p.limit), truncated: visible.length > p.limit };
  };
  if (p.branch === undefined)
    return cut(await userGrep(ws.root, p.pattern, options), await ws.files(undefined));
  // in a branch: ripgrep runs in the sandbox, seeing the branch's view (hidden files are not there)
  return ws.inBranch(p.branch, async (held) => {
    await held.branch.materialize();
    const sandbox = await ws.sandbox(false, true);
    const run = await sandbox.run("rg", ripgrepArgs(ws.root, p.pattern, options), {
      branch: held.branch,
      cwd: ws.root,
    });
    if (run.exitCode !== 0 && run.exitCode !== 1)
      throw new EngineError("INTERNAL", `rg failed: ${run.stderr.trim().split("\n")[0] ?? run.exitCode}`);
    // the door rechecks the ignore rules and knows the hidden files' other names
    return cut(parseRipgrep(run.stdout), await ws.files(held));
  });
};
