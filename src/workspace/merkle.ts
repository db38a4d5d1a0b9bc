import { sha256Hex } from "./hash.js";

interface DirNode {
  files: Map<string, string>;
  dirs: Set<string>;
}

function parentOf(path: string): { dir: string; name: string } {
  const slash = path.lastIndexOf("/");
  return slash === -1 ? { dir: "", name: path } : { dir: path.slice(0, slash), name: path.slice(slash + 1) };
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The hash of every folder that (transitively) holds a file, "" being the root, which always has one.
 * A folder's hash is sha256 over its children sorted by name, each as kind, name and hash; a child
 * folder's hash is computed first. Depends only on paths and content hashes, never on times.
 */
export function computeDirHashes(fileHashes: ReadonlyMap<string, string>): Record<string, string> {
  const nodes = new Map<string, DirNode>();
  const node = (dir: string): DirNode => {
    let found = nodes.get(dir);
    if (!found) {
      found = { files: new Map(), dirs: new Set() };
      nodes.set(dir, found);
    }
    return found;
  };
  node("");
  for (const [path, hash] of fileHashes) {
    let { dir, name } = parentOf(path);
    node(dir).files.set(name, hash);
    // Register the folder chain up to the first folder already known.
    while (dir !== "") {
      const up = parentOf(dir);
      const parent = node(up.dir);
      if (parent.dirs.has(up.name)) break;
      parent.dirs.add(up.name);
      dir = up.dir;
      name = up.name;
    }
  }

  const depth = (dir: string): number => (dir === "" ? 0 : dir.split("/").length);
  const order = [...nodes.keys()].sort((a, b) => depth(b) - depth(a) || compareNames(a, b));
  const hashes = new Map<string, string>();
  for (const dir of order) {
    const current = nodes.get(dir);
    if (!current) continue;
    const children: [string, string, string][] = [];
    for (const [name, hash] of current.files) children.push([name, "f", hash]);
    for (const name of current.dirs) {
      const childHash = hashes.get(dir === "" ? name : `${dir}/${name}`);
      if (childHash !== undefined) children.push([name, "d", childHash]);
    }
    children.sort((a, b) => compareNames(a[0], b[0]));
    hashes.set(dir, sha256Hex(children.map(([name, kind, hash]) => `${kind} ${name}\0${hash}\n`).join("")));
  }

  const out: Record<string, string> = Object.create(null);
  for (const dir of [...hashes.keys()].sort(compareNames)) {
    const hash = hashes.get(dir);
    if (hash !== undefined) out[dir] = hash;
  }
  return out;
}
