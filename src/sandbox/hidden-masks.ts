/**
 * Masked folders: the compact form of hidden paths. A folder that holds more hidden entries than others
 * (`data/*.csv` in a folder of 100,000 files) is described by what stays visible in it, so that neither
 * the policy, nor what the helper reads, nor the mounts it makes follow the number of hidden files.
 */
import { type Dirent, readdirSync } from "node:fs";
import { sep } from "node:path";
import type { HiddenMask, SandboxPolicy } from "./types.js";

/** Up to this many hidden entries in one folder, they are hidden one by one without looking further. */
export const FEW = 8;
/** The same in a writable root (the workspace, where commands add files all the time): a masked folder's
 * own list of entries is read-only, so a writable root is masked only when it would cost thousands of
 * mounts otherwise. */
export const ROOT_FEW = 4096;

/**
 * Whether a folder with `hidden` hidden entries is masked rather than hidden entry by entry: a mask costs
 * one mount and one per kept entry that is not a symlink (`keptMounts`), an entry one mount.
 */
export function masksFolder(hidden: number, keptMounts: number, few: number): boolean {
  return hidden > few && 1 + keptMounts < hidden;
}

function below(folder: string): string {
  return folder.endsWith(sep) ? folder : folder + sep;
}

/**
 * What hides the absolute `path` under `policy`: the hidden path at or above it, or the hidden entry of
 * a masked folder that holds it (every entry but the kept ones); undefined when it is not hidden.
 */
export function hiddenRootOf(policy: SandboxPolicy, path: string): string | undefined {
  const listed = policy.hiddenPaths.find((entry) => path === entry || path.startsWith(below(entry)));
  if (listed) return listed;
  for (const mask of policy.hiddenMasks ?? []) {
    const prefix = below(mask.folder);
    if (!path.startsWith(prefix)) continue;
    const name = path.slice(prefix.length).split(sep)[0] as string;
    if (!mask.keep.includes(name)) return prefix + name;
  }
  return undefined;
}

/** The visible entries of a folder, hidden ones (`hidden`: names) left out; undefined when unreadable. */
function keptEntries(folder: string, hidden: ReadonlySet<string>): Dirent[] | undefined {
  try {
    return readdirSync(folder, { withFileTypes: true }).filter((entry) => !hidden.has(entry.name));
  } catch {
    return undefined;
  }
}

/**
 * The hidden paths and masked folders the helper applies: those of the policy, with the hidden paths of
 * a folder that holds many of them turned into a mask where that costs fewer mounts (a policy built by
 * hand or by an admin may list 100,000 paths; one from resolvePolicy has its masks already). Masks are
 * sorted, so that a folder comes before the folders below it.
 */
export function compactHidden(policy: SandboxPolicy): { paths: string[]; masks: HiddenMask[] } {
  const byFolder = new Map<string, string[]>();
  const paths: string[] = [];
  for (const path of policy.hiddenPaths) {
    const cut = path.lastIndexOf(sep);
    if (cut <= 0) {
      paths.push(path);
      continue;
    }
    const folder = path.slice(0, cut);
    const names = byFolder.get(folder);
    if (names) names.push(path.slice(cut + 1));
    else byFolder.set(folder, [path.slice(cut + 1)]);
  }
  const masks = [...(policy.hiddenMasks ?? [])];
  for (const [folder, names] of byFolder) {
    const few = policy.writableRoots.includes(folder) ? ROOT_FEW : FEW;
    const kept = names.length > few ? keptEntries(folder, new Set(names)) : undefined;
    const keptMounts = kept?.filter((entry) => !entry.isSymbolicLink()).length ?? 0;
    if (kept && masksFolder(names.length, keptMounts, few)) {
      masks.push({ folder, keep: kept.map((entry) => entry.name).sort() });
    } else {
      for (const name of names) paths.push(below(folder) + name);
    }
  }
  masks.sort((a, b) => (a.folder < b.folder ? -1 : a.folder > b.folder ? 1 : 0));
  return { paths, masks };
}
