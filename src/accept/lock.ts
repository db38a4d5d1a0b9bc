/**
 * One accept or undo of a folder at a time: `accept/lock` in the data directory holds the pid of the
 * process writing. A lock whose process is gone (killed mid-accept) is taken over.
 */
import { open, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { PRIVATE_FILE, privateDir } from "../config/private.js";
import { errorCode } from "../workspace/errors.js";
import { AcceptError } from "./errors.js";
import { acceptDir } from "./journal.js";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === "EPERM";
  }
}

async function take(path: string): Promise<boolean> {
  try {
    const handle = await open(path, "wx", PRIVATE_FILE);
    await handle.writeFile(String(process.pid));
    await handle.close();
    return true;
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error;
    return false;
  }
}

/** Runs `work` holding the folder's accept lock; AcceptError BUSY while another process holds it. */
export async function withAcceptLock<T>(
  root: string,
  env: NodeJS.ProcessEnv,
  work: () => Promise<T>,
): Promise<T> {
  const dir = acceptDir(root, env);
  await privateDir(dir);
  const path = join(dir, "lock");
  if (!(await take(path))) {
    const pid = Number((await readFile(path, "utf8").catch(() => "")).trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid))
      throw new AcceptError("BUSY", `another accept or undo of this folder is running (pid ${pid})`);
    await unlink(path).catch(() => {});
    if (!(await take(path)))
      throw new AcceptError("BUSY", "another accept or undo of this folder is starting");
  }
  try {
    return await work();
  } finally {
    await unlink(path).catch(() => {});
  }
}
