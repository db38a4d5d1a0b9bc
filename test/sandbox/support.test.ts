import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseSupport } from "../../src/sandbox/linux.js";
import { runSandboxed, SandboxError, sandboxSupport } from "../../src/sandbox/run.js";
import { describeSeccompDenial, seccompProgram, syscallName } from "../../src/sandbox/seccomp.js";
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

/** What the classic BPF `program` answers for one x86-64 system call (a tiny interpreter of the opcodes it uses). */
function decide(program: Buffer, nr: number, args: readonly number[] = []): "allow" | "notify" | "other" {
  const data = Buffer.alloc(64);
  data.writeUInt32LE(nr, 0);
  data.writeUInt32LE(0xc000003e, 4);
  for (const [index, value] of args.entries()) data.writeUInt32LE(value >>> 0, 16 + 8 * index);
  let a = 0;
  for (let pc = 0; pc * 8 < program.length; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) a = data.readUInt32LE(k);
    else if (code === 0x54) a = (a & k) >>> 0;
    else if (code === 0x15) pc += a === k ? jt : jf;
    else if (code === 0x45) pc += (a & k) !== 0 ? jt : jf;
    else if (code === 0x06) return k === 0x7fff0000 ? "allow" : k === 0x7fc00000 ? "notify" : "other";
    else throw new Error(`opcode ${code}`);
  }
  throw new Error("fell off the program");
}

describe("seccomp program", () => {
  const SOCKET = 41;
  const CLOEXEC_NONBLOCK = 0o2000000 | 0o4000;

  it("without network allows the loopback's sockets (inet, inet6, unix, netlink route) and nothing else", () => {
    const off = seccompProgram({ network: false, arch: "x64" });
    const allowed: [number, number, number][] = [
      [2, 1, 0], // AF_INET, SOCK_STREAM
      [2, 2 | CLOEXEC_NONBLOCK, 0], // AF_INET, SOCK_DGRAM with flags
      [10, 1, 6], // AF_INET6, SOCK_STREAM, IPPROTO_TCP
      [1, 1, 0], // AF_UNIX
      [16, 3 | CLOEXEC_NONBLOCK, 0], // AF_NETLINK, NETLINK_ROUTE (getifaddrs)
    ];
    for (const args of allowed) expect(decide(off, SOCKET, args), args.join(",")).toBe("allow");
    const denied: [number, number, number][] = [
      [2, 3, 1], // AF_INET, SOCK_RAW, ICMP
      [10, 3 | CLOEXEC_NONBLOCK, 58], // AF_INET6, SOCK_RAW
      [2, 10, 0], // AF_INET, SOCK_PACKET
      [17, 3, 0], // AF_PACKET
      [16, 3, 9], // AF_NETLINK, NETLINK_AUDIT
      [16, 3, 12], // AF_NETLINK, NETLINK_NETFILTER
      [40, 1, 0], // AF_VSOCK
      [38, 5, 0], // AF_ALG
      [44, 3, 0], // AF_XDP
    ];
    for (const args of denied) expect(decide(off, SOCKET, args), args.join(",")).toBe("notify");
    const on = seccompProgram({ network: true, arch: "x64" });
    for (const args of [...allowed, ...denied]) expect(decide(on, SOCKET, args)).toBe("allow");
    expect(decide(off, 101)).toBe("notify"); // ptrace, still
    expect(decide(off, 0)).toBe("allow"); // read
  });

  it("describes a refused socket with its family and type, naming the private loopback", () => {
    const raw = describeSeccompDenial(SOCKET, [2n, 3n, 1n], "x64");
    expect(raw).toMatchObject({ kind: "network", syscall: "socket" });
    expect(raw.detail).toMatch(/^socket\(AF_INET, SOCK_RAW\) refused: only the sandbox's private loopback/);
    expect(describeSeccompDenial(SOCKET, [16n, 3n, 9n], "x64").detail).toMatch(
      /^socket\(AF_NETLINK, protocol 9\)/,
    );
    expect(describeSeccompDenial(SOCKET, [17n, 3n, 0n], "x64").detail).toMatch(/^socket\(AF_PACKET\)/);
  });

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
