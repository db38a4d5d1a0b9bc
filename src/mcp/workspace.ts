import { realpath, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";

/**
 * The workspace of an MCP session, chosen once for the session (never per call, never by the agent):
 * the folder the user gave with --root; else the first of the client's roots (roots/list) that is a
 * real folder; else the folder umbra was started in (as every command finds it: the enclosing
 * repository). A root that is `/` or the home folder itself is refused unless the user named it: an
 * agent would see everything the user has.
 */

export class McpWorkspaceError extends Error {
  override name = "McpWorkspaceError";
}

export interface RootChoice {
  /** The folder the user named (--root), already resolved: absolute and free of symlinks. */
  given?: string;
  /** The workspace of the folder umbra was started in (the front end's root discovery). */
  here: () => Promise<string>;
}

/** The home folder, free of symlinks (as roots are). */
async function realHome(): Promise<string> {
  return realpath(homedir()).catch(() => resolve(homedir()));
}

/** Whether `root` (absolute, real) is too wide to be a workspace umbra picked by itself. */
export function tooWide(root: string, home: string): boolean {
  return root === "/" || root === home;
}

/** The first `file://` root that is a folder and not too wide (free of symlinks); why the others were passed over. */
export async function pickClientRoot(
  uris: readonly string[],
  home: string,
): Promise<{ root?: string; skipped: string[] }> {
  const skipped: string[] = [];
  for (const uri of uris) {
    let path: string;
    try {
      if (!uri.startsWith("file://")) throw new Error("not a file:// root");
      path = await realpath(fileURLToPath(uri));
      if (!(await stat(path)).isDirectory()) throw new Error("not a folder");
    } catch (error) {
      skipped.push(`${uri}: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    if (tooWide(path, home)) {
      skipped.push(`${uri}: the whole file system or home folder is not a workspace`);
      continue;
    }
    return { root: path, skipped };
  }
  return { skipped };
}

/** The workspace of the session served by `server` (the client is initialized). */
export async function sessionRoot(
  choice: RootChoice,
  server: Server,
  log: (line: string) => void,
): Promise<string> {
  if (choice.given !== undefined) return choice.given;
  if (server.getClientCapabilities()?.roots) {
    try {
      const { roots } = await server.listRoots();
      const picked = await pickClientRoot(
        roots.map((root) => root.uri),
        await realHome(),
      );
      for (const why of picked.skipped) log(`client root passed over: ${why}`);
      if (picked.root) return picked.root;
    } catch (error) {
      log(
        `the client's roots could not be listed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  const root = await choice.here();
  if (tooWide(root, await realHome()))
    throw new McpWorkspaceError(
      `no workspace: umbra mcp was started in ${root}, which is not a project; start it with --root DIR`,
    );
  return root;
}
