import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadOrCreateSecret, PathMasker } from "../../src/index/mask.js";

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("path masking", () => {
  it("keeps the folder shape but none of the names", () => {
    const masker = new PathMasker(Buffer.alloc(32, 7));
    const masked = masker.mask("src/billing/invoice.test.ts");
    const parts = masked.split("/");
    expect(parts).toHaveLength(3);
    expect(parts[2]?.split(".")).toHaveLength(3);
    for (const name of ["src", "billing", "invoice", "test", "ts"]) expect(masked).not.toContain(name);
    expect(masker.mask("src/billing/invoice.test.ts")).toBe(masked);
    expect(masker.mask("src/other.ts").split("/")[0]).toBe(parts[0]);
  });

  it("depends on the workspace key", () => {
    const a = new PathMasker(Buffer.alloc(32, 1)).mask("src/a.ts");
    const b = new PathMasker(Buffer.alloc(32, 2)).mask("src/a.ts");
    expect(a).not.toBe(b);
  });

  it("creates the secret once, mode 0600, and reuses it", async () => {
    dir = await mkdtemp(join(tmpdir(), "umbra-mask-"));
    const file = join(dir, "ws", "secret.key");
    const key = await loadOrCreateSecret(file);
    expect(key.length).toBe(32);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await loadOrCreateSecret(file)).toEqual(key);
    expect(await readFile(file)).toEqual(key);
  });
});
