/** What differs between two sets of files, each given as path → content hash. */
export interface ChangeSet {
  added: string[];
  modified: string[];
  removed: string[];
  /** A removed path and an added path with the same content. */
  renamed: { from: string; to: string }[];
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function groupByHash(
  paths: readonly string[],
  hashes: Readonly<Record<string, string>>,
): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const path of paths) {
    const hash = hashes[path] as string;
    const group = groups.get(hash);
    if (group) group.push(path);
    else groups.set(hash, [path]);
  }
  return groups;
}

/**
 * Pairs removed and added paths holding the same content, each path used at most once: first paths with
 * the same file name (a moved file), then the rest in path order. Deterministic for given inputs.
 */
function pairRenames(removed: readonly string[], added: readonly string[]): { from: string; to: string }[] {
  const pairs: { from: string; to: string }[] = [];
  const used = new Set<string>();
  const addedByName = new Map<string, string[]>();
  for (const to of added) {
    const queue = addedByName.get(baseName(to));
    if (queue) queue.push(to);
    else addedByName.set(baseName(to), [to]);
  }
  const leftover: string[] = [];
  for (const from of removed) {
    const to = addedByName.get(baseName(from))?.shift();
    if (to === undefined) {
      leftover.push(from);
      continue;
    }
    used.add(to);
    pairs.push({ from, to });
  }
  const rest = added.filter((to) => !used.has(to));
  for (let i = 0; i < leftover.length && i < rest.length; i++) {
    pairs.push({ from: leftover[i] as string, to: rest[i] as string });
  }
  return pairs;
}

/** The changes that turn `previous` into `next` (both path → content hash). Pure; results sorted by path. */
export function diffFiles(
  previous: Readonly<Record<string, string>>,
  next: Readonly<Record<string, string>>,
): ChangeSet {
  const added: string[] = [];
  const modified: string[] = [];
  const removed: string[] = [];
  for (const path of Object.keys(next)) {
    if (!Object.hasOwn(previous, path)) added.push(path);
    else if (previous[path] !== next[path]) modified.push(path);
  }
  for (const path of Object.keys(previous)) {
    if (!Object.hasOwn(next, path)) removed.push(path);
  }
  added.sort(compare);
  removed.sort(compare);
  modified.sort(compare);

  const renamed: { from: string; to: string }[] = [];
  const addedByHash = groupByHash(added, next);
  for (const [hash, from] of groupByHash(removed, previous)) {
    const to = addedByHash.get(hash);
    if (to) renamed.push(...pairRenames(from, to));
  }
  renamed.sort((a, b) => compare(a.from, b.from));
  const renamedFrom = new Set(renamed.map((pair) => pair.from));
  const renamedTo = new Set(renamed.map((pair) => pair.to));
  return {
    added: added.filter((path) => !renamedTo.has(path)),
    modified,
    removed: removed.filter((path) => !renamedFrom.has(path)),
    renamed,
  };
}

/** True when a change set holds no change at all. */
export function isEmpty(changes: ChangeSet): boolean {
  return (
    changes.added.length === 0 &&
    changes.modified.length === 0 &&
    changes.removed.length === 0 &&
    changes.renamed.length === 0
  );
}
