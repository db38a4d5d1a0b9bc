import { isAbsolute, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { LspError } from "./errors.js";

/** Maps workspace-relative paths to the `file://` URIs a server sees, and back. */
export class UriMapper {
  private readonly roots: string[];

  /** `roots`: the workspace root and any other spelling of it (its real path) servers may report. */
  constructor(
    readonly workspaceRoot: string,
    aliases: string[] = [],
  ) {
    this.roots = [workspaceRoot, ...aliases.filter((alias) => alias !== workspaceRoot)];
  }

  toUri(relPath: string): string {
    return pathToFileURL(`${this.workspaceRoot}/${relPath}`).href;
  }

  get rootUri(): string {
    return pathToFileURL(this.workspaceRoot).href;
  }

  /**
   * The workspace-relative path of a URI (with `/`), or the absolute path and `external: true` when it
   * lies outside the workspace. Non-file URIs come back unchanged as external.
   */
  toPath(uri: string): { path: string; external: boolean } {
    let fsPath: string;
    try {
      fsPath = fileURLToPath(uri);
    } catch {
      return { path: uri, external: true };
    }
    for (const root of this.roots) {
      const rel = relative(root, fsPath);
      if (rel !== "" && !rel.startsWith("..") && !isAbsolute(rel)) {
        return { path: rel.split(sep).join("/"), external: false };
      }
    }
    return { path: fsPath, external: true };
  }
}

/** A workspace-relative path in canonical form: `/` separators, no `./`, no leading or trailing `/`. */
export function normalizeRelPath(relPath: string): string {
  const parts: string[] = [];
  for (const part of relPath.replaceAll("\\", "/").split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) throw new LspError("not-found", `path leaves the workspace: ${relPath}`);
      parts.pop();
    } else parts.push(part);
  }
  if (parts.length === 0) throw new LspError("not-found", `not a file path: ${relPath}`);
  return parts.join("/");
}
