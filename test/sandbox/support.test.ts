import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseSupport } from "../../src/sandbox/linux.js";
import { runSandboxed, SandboxError, sandboxSupport } from "../../src/sandbox/run.js";
import { seccompProgram, syscallName } from "../../src/sandbox/seccomp.js";
import { defaultPolicy, ensureHelper } from "./helpers.js";

const saved = process.env.UMBRA_HELPER;
afterEach(() => {
  if (saved === undefined) delete process.env.UMBRA_HELPER;
  else process.env.UMBRA_HELPER = saved;
});

describe("support and failing closed", () => {
  it("reports what this kernel offers", async () => {
    ensureHelper();
    const found = await sandboxSupport();
    expect(found.ok).toBe(true);
    expect(found.userNamespaces).toBe(true);
    expect(found.seccomp).toBe(true);
    expect(found.landlockAbi).toBeGreaterThanOrEqual(1);
    expect(found.landlockAbi).toBeLessThanOrEqual(7);
  });

  it("refuses, saying what is missing and how to enable it, when the kernel lacks user namespaces or Landlock", async () => {
    const dir = mkdtempSync(join(tmpdir(), "umbra-fake-helper-"));
    try {
      const fake = join(dir, "umbra-helper");
      writeFileSync(
        fake,
        '#!/bin/sh\nprintf "userns fail Operation not permitted\\nlandlock 0 Landlock is built in but not enabled\\nseccomp ok\\n"\n',
        { mode: 0o755 },
      );
      process.env.UMBRA_HELPER = fake;
      const policy = defaultPolicy(dir);
      const error = await runSandboxed(policy, "true", []).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SandboxError);
      expect((error as SandboxError).code).toBe("UNSUPPORTED");
      expect((error as SandboxError).message).toMatch(/user namespaces.*sysctl/);
      expect((error as SandboxError).message).toMatch(/Landlock.*lsm=/);
      // The explicit escape hatch still runs it.
      const plain = await runSandboxed(policy, "sh", ["-c", "echo plain"], { unsandboxed: true });
      expect(plain.stdout).toBe("plain\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses when the helper is not built", async () => {
    process.env.UMBRA_HELPER = "/nonexistent/umbra-helper";
    const error = await runSandboxed(defaultPolicy("/tmp"), "true", []).catch((e: unknown) => e);
    expect((error as SandboxError).code).toBe("HELPER_NOT_BUILT");
  });

  it("rejects a policy with relative paths", async () => {
    const error = await runSandboxed(defaultPolicy("relative/ws"), "true", []).catch((e: unknown) => e);
    expect((error as SandboxError).code).toBe("BAD_POLICY");
  });

  it("parses the probe of a kernel without seccomp notifications", () => {
    const found = parseSupport("userns ok\nlandlock 3\nseccomp fail Invalid argument\n");
    expect(found.ok).toBe(false);
    expect(found.missing.join(" ")).toMatch(/seccomp/);
  });
});

describe("seccomp program", () => {
  it("checks the architecture first and ends in returns", () => {
    const program = seccompProgram({ network: false, arch: "x64" });
    expect(program.length % 8).toBe(0);
    expect(program.readUInt16LE(0)).toBe(0x20); // ld [arch]
    expect(program.readUInt32LE(4)).toBe(4);
    expect(program.readUInt32LE(12)).toBe(0xc000003e);
    expect(program.readUInt16LE(program.length - 8)).toBe(0x06); // ret
    expect(seccompProgram({ network: true, arch: "x64" }).length).toBeLessThan(program.length);
    expect(seccompProgram({ network: false, arch: "arm64" }).readUInt32LE(12)).toBe(0xc00000b7);
    expect(syscallName(101, "x64")).toBe("ptrace");
  });
});
