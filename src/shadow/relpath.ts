import { ShadowError } from "./errors.js";

/**
 * A workspace-relative path in canonical form: `/`-separated, no `.` or empty segments. Absolute paths,
 * `..` segments and NUL bytes are rejected with a ShadowError (PATH_ESCAPE). `""` is the
 * workspace root itself and is allowed only when `allowRoot` is set.
 */
export function normalizeRelPath(relPath: string, allowRoot = false): string {
  if (typeof relPath !== "string") throw new ShadowError("PATH_ESCAPE", "a branch path must be a string");
  if (relPath.startsWith("/")) {
    throw new ShadowError(
      "PATH_ESCAPE",
      `branch paths are relative to the workspace, not absolute: ${relPath}`,
    );
  }
  if (relPath.includes("\0")) {
    throw new ShadowError("PATH_ESCAPE", `invalid branch path (NUL byte): ${JSON.stringify(relPath)}`);
  }
  const parts: string[] = [];
  for (const part of relPath.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      throw new ShadowError("PATH_ESCAPE", `branch path leaves the workspace: ${relPath}`);
    }
    parts.push(part);
  }
  const normal = parts.join("/");
  if (normal === "" && !allowRoot) {
    throw new ShadowError(
      "PATH_ESCAPE",
      `a branch path must name a file, not the workspace root: "${relPath}"`,
    );
  }
  return normal;
}

/** True when `path` is `dir` or lies below it (both canonical workspace-relative paths; "" is the root). */
export function isAtOrBelow(path: string, dir: string): boolean {
  return dir === "" || path === dir || path.startsWith(`${dir}/`);
}

/** The parent of a canonical relative path ("" for a top-level entry). */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}

/** `dir/name`, or `name` at the root. */
export function joinRel(dir: string, name: string): string {
  return dir === "" ? name : `${dir}/${name}`;
}
