import { chmodSync, closeSync, constants, lstatSync, mkdirSync, openSync } from "node:fs";
import { chmod, mkdir, readdir } from "node:fs/promises";
import { dirname, join } from "node:path";

/**
 * The modes of umbra's own state under the data directory: every folder umbra makes there 0700, every
 * file 0600, whatever the process umask. (Copies of a workspace's files inside a branch keep that
 * workspace's modes: commands run there must see them as the user's tree has them.)
 */
export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

/** Creates `dir` and the folders above it that are missing, each 0700. */
export function privateDirSync(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
}

/** Creates `dir` and the folders above it that are missing, each 0700. */
export async function privateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
}

/**
 * Creates `file` empty and 0600 when it is missing (its folders 0700), and makes an existing one of an
 * earlier version 0600: for a store that makes its own files with the database's mode (SQLite's -wal,
 * -shm and -journal files take the database file's) or opens a file it creates with the umask's.
 */
export function privateFileSync(file: string): void {
  privateDirSync(dirname(file));
  try {
    closeSync(openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, PRIVATE_FILE));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    try {
      const stats = lstatSync(file);
      if (stats.isFile() && stats.uid === process.getuid?.() && (stats.mode & 0o777) !== PRIVATE_FILE)
        chmodSync(file, PRIVATE_FILE);
    } catch {
      // an existing file whose mode cannot be changed (a read-only disk) still opens as it is
    }
  }
}

/**
 * Makes every folder below `dir` 0700 and every file 0600 (links are left alone), for a library that
 * writes its files with the process umask (LanceDB). Entries removed meanwhile are skipped.
 */
export async function privateTree(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  await Promise.all(
    entries.map(async (entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        await chmod(path, PRIVATE_DIR).catch(() => undefined);
        await privateTree(path);
      } else if (entry.isFile()) await chmod(path, PRIVATE_FILE).catch(() => undefined);
    }),
  );
}
