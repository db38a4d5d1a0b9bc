import { createHmac, randomBytes } from "node:crypto";
import { chmod, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { PRIVATE_FILE, privateDir } from "../config/private.js";

/**
 * Path masking: every component of a path, split on `/` and `.`, becomes a keyed HMAC, so stored
 * metadata keeps the folder shape (`a/b.c` → `x/y.z`) but not the names.
 */
export class PathMasker {
  constructor(private readonly key: Buffer) {}

  maskComponent(component: string): string {
    return createHmac("sha256", this.key).update(component).digest("base64url").slice(0, 12);
  }

  mask(path: string): string {
    return path
      .split("/")
      .map((segment) =>
        segment
          .split(".")
          .map((part) => (part === "" ? "" : this.maskComponent(part)))
          .join("."),
      )
      .join("/");
  }
}

/** Reads the per-workspace secret, creating it (mode 0600) on first use. */
export async function loadOrCreateSecret(file: string): Promise<Buffer> {
  try {
    const key = await readFile(file);
    if (key.length >= 32) return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  await privateDir(dirname(file));
  const key = randomBytes(32);
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, key, { mode: PRIVATE_FILE });
  await chmod(temp, PRIVATE_FILE);
  await rename(temp, file);
  return key;
}
