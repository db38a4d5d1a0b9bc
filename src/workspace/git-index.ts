/**
 * Which paths git tracks, read from the repository's index file (`.git/index`) without running git: the
 * workspace's git metadata is untrusted, and `git ls-files` would run hooks such as `core.fsmonitor`.
 * Only what the scan needs is kept: tracked paths below a folder of the default excluded list, so that a
 * tracked `build/` or `vendor/` is scanned like any source folder.
 */
import { readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { findGitDir, findRepositoryTop } from "./ignore-rules.js";

export interface TrackedPaths {
  /** Tracked folders (root-relative, posix) named in the excluded list, and every folder below them. */
  dirs: ReadonlySet<string>;
  /** Tracked files below an excluded folder name. */
  files: ReadonlySet<string>;
}

const SIGNATURE = 0x44495243; // "DIRC"
/** Stat fields before the object id in each entry: ctime, mtime, dev, ino, mode, uid, gid, size. */
const STAT_BYTES = 40;
const EXTENDED_FLAG = 0x4000;
/** An index file above this is not read (git's own for a million files is about 100 MB). */
const MAX_INDEX_BYTES = 512 * 1024 * 1024;

/**
 * The paths of an index file's entries, in order (versions 2, 3 and 4; folder entries of a sparse index
 * end with "/"). Undefined for anything that is not a well-formed index.
 */
export function parseGitIndex(bytes: Buffer, idBytes = 20): string[] | undefined {
  if (bytes.length < 12 || bytes.readUInt32BE(0) !== SIGNATURE) return undefined;
  const version = bytes.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  const count = bytes.readUInt32BE(8);
  const paths: string[] = [];
  let offset = 12;
  let previous: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    const start = offset;
    const flagsAt = start + STAT_BYTES + idBytes;
    if (flagsAt + 2 > bytes.length) return undefined;
    const flags = bytes.readUInt16BE(flagsAt);
    let pathAt = flagsAt + 2;
    if (version >= 3 && flags & EXTENDED_FLAG) pathAt += 2;
    let path: Buffer;
    if (version === 4) {
      // The path is the previous one less N trailing bytes (N a varint), then a NUL-terminated suffix.
      let strip = 0;
      let byte: number;
      let at = pathAt;
      do {
        if (at >= bytes.length) return undefined;
        byte = bytes[at++] as number;
        strip = (strip << 7) | (byte & 0x7f);
        if (byte & 0x80) strip++;
      } while (byte & 0x80);
      const end = bytes.indexOf(0, at);
      if (end < 0 || strip > previous.length) return undefined;
      path = Buffer.concat([previous.subarray(0, previous.length - strip), bytes.subarray(at, end)]);
      offset = end + 1;
    } else {
      const end = bytes.indexOf(0, pathAt);
      if (end < 0) return undefined;
      path = bytes.subarray(pathAt, end);
      // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
      offset = start + ((end - start + 8) & ~7);
    }
    if (offset > bytes.length) return undefined;
    paths.push(path.toString("utf8"));
    previous = path;
  }
  return paths;
}

let lastParsed: { key: string; paths: TrackedPaths } | undefined;

/** Object id length of the repository: 32 bytes for `objectFormat = sha256`, else 20. */
async function objectIdBytes(commonDir: string): Promise<number> {
  const config = await readFile(join(commonDir, "config"), "utf8").catch(() => "");
  // blanks before the key on its own line only: `^\s*` read on over the blank lines after every line start
  return /^[^\S\n\r\u2028\u2029]*objectformat\s*=\s*sha256\s*$/im.test(config) ? 32 : 20;
}

/**
 * Tracked paths at or below a folder named in `excludedNames`, relative to `root` (which may be a folder
 * inside the repository). Undefined when `root` is not in a git repository or its index cannot be read:
 * the default excluded list then applies as it is.
 */
export async function trackedExcludedPaths(
  root: string,
  excludedNames: ReadonlySet<string>,
): Promise<TrackedPaths | undefined> {
  const top = await findRepositoryTop(root);
  if (top === undefined) return undefined;
  const git = await findGitDir(top);
  if (!git) return undefined;
  const indexFile = join(git.gitDir, "index");
  const info = await stat(indexFile).catch(() => undefined);
  if (!info || info.size > MAX_INDEX_BYTES) return undefined;
  // A long-lived process (umbra watch) scans again and again: parse the index only when it changed.
  const key = `${indexFile}\0${root}\0${info.size}\0${info.mtimeMs}\0${[...excludedNames].join("/")}`;
  const known = lastParsed?.key === key ? lastParsed.paths : undefined;
  if (known) return known;
  const bytes = await readFile(indexFile).catch(() => undefined);
  if (!bytes) return undefined;
  const entries = parseGitIndex(bytes, await objectIdBytes(git.commonDir));
  if (!entries) return undefined;
  const below = relative(top, root).split(sep).join("/");
  const prefix = below === "" ? "" : `${below}/`;
  const dirs = new Set<string>();
  const files = new Set<string>();
  for (const entry of entries) {
    // Folder entries of a sparse index stand for folders that are not checked out.
    if (!entry.startsWith(prefix) || entry.endsWith("/")) continue;
    const parts = entry.slice(prefix.length).split("/");
    const first = parts.findIndex((part, i) => i < parts.length - 1 && excludedNames.has(part));
    if (first < 0) continue;
    for (let i = first; i < parts.length - 1; i++) dirs.add(parts.slice(0, i + 1).join("/"));
    files.add(parts.join("/"));
  }
  lastParsed = { key, paths: { dirs, files } };
  return lastParsed.paths;
}
