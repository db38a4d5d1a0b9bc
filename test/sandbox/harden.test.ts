/**
 * Hardening probes of issue 12: no controlling terminal, no setuid/setgid bits, process and memory limits
 * that hold as root, a bounded private /tmp and /dev/shm, host unix sockets unreachable wherever the
 * workspace lies, and odd file names that never make a run refuse. Each probe attacks one of them.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explain } from "../../src/sandbox/explain.js";
import { helperArgs, hiddenPathList, placeholderJournal } from "../../src/sandbox/linux.js";
import { runSandboxed } from "../../src/sandbox/run.js";
import { seccompProgram } from "../../src/sandbox/seccomp.js";
import { helperPath } from "../../src/shadow/helper.js";
import { underPty } from "../helpers/pty.js";
import { ensureHelper, makeFixture, processesWith, py, type SandboxFixture, sh } from "./helpers.js";

let f: SandboxFixture;

beforeAll(async () => {
  ensureHelper();
  f = await makeFixture("/var/tmp");
});

afterAll(async () => {
  await f?.done();
});

/**
 * Runs `script` in the helper under a new pseudo-terminal that is the helper's controlling terminal (as
 * when umbra runs in the user's terminal); resolves with everything written to the terminal.
 */
function underTerminal(script: string): Promise<string> {
  const program = join(f.base, "seccomp.bin");
  writeFileSync(program, seccompProgram({ network: false }));
  const hidden = join(f.base, "hidden.bin");
  writeFileSync(hidden, hiddenPathList(f.policy));
  const args = helperArgs(f.policy, "sh", ["-c", script], {
    cwd: f.ws,
    placeholderDir: placeholderJournal(),
  });
  return underPty([helperPath(), ...args], { fds: { 3: program, 4: "/dev/null", 5: hidden } });
}

describe("terminal", () => {
  it("gives the command no controlling terminal: /dev/tty cannot be opened", async () => {
    // The driver's terminal is the helper's controlling terminal; the command must not reach it.
    const out = await underTerminal(
      "if (: < /dev/tty) 2>/dev/null; then echo TTY-OPEN; else echo TTY-REFUSED; fi",
    );
    expect(out).toContain("TTY-REFUSED");
    expect(out).not.toContain("TTY-OPEN");
  });

  it("runs in a session of its own", async () => {
    const r = await py(f.policy, "import os\nprint(os.getsid(0) == os.getpid())");
    expect(r.stdout.trim()).toBe("True");
  });

  it("gets a pipe, not a terminal, as stdin", async () => {
    const r = await sh(f.policy, "test -t 0 && echo TTY || echo NOT-TTY; cat", { input: "fed\n" });
    expect(r.stdout).toBe("NOT-TTY\nfed\n");
  });
});

describe("setuid and setgid bits", () => {
  const PROBE = `
import os, stat
def bits(path):
    return oct(os.stat(path).st_mode & 0o6000)
open("f", "w").close()
os.mkdir("d")
for name, call in [
    ("chmod u+s", lambda: os.chmod("f", 0o4755)),
    ("chmod g+s", lambda: os.chmod("d", 0o2755)),
    ("fchmod", lambda: os.fchmod(os.open("f", os.O_RDONLY), 0o6755)),
    ("open O_CREAT", lambda: os.close(os.open("g", os.O_CREAT | os.O_WRONLY, 0o4755))),
    ("mkdir", lambda: os.mkdir("e", 0o2755)),
]:
    try:
        call()
        print(name, "allowed")
    except OSError as e:
        print(name, "refused", e.errno)
for path in ["f", "d", "g", "e"]:
    if os.path.exists(path):
        print("bits", path, bits(path))
`;

  it("cannot set or create setuid/setgid bits (chmod, fchmod, open with O_CREAT; mkdir drops them)", async () => {
    const g = await makeFixture("/var/tmp");
    try {
      const r = await py(g.policy, PROBE);
      for (const name of ["chmod u+s", "chmod g+s", "fchmod", "open O_CREAT"])
        expect(r.stdout).toContain(`${name} refused 1`);
      expect(r.stdout).not.toMatch(/bits \S+ 0o[1-7]/);
      expect(r.denials.some((d) => d.detail.includes("setuid"))).toBe(true);
      const note = explain(r, g.policy).find((n) => n.blocked.includes("setuid/setgid"));
      expect(note?.message).toContain("0755 instead of 4755");
      for (const name of ["f", "d", "g", "e"]) {
        const path = join(g.ws, name);
        if (existsSync(path)) expect(statSync(path).mode & 0o6000).toBe(0);
      }
    } finally {
      await g.done();
    }
  });

  it("leaves no setuid bit from install -m 4755 or chmod u+s, and still allows ordinary chmod", async () => {
    const g = await makeFixture("/var/tmp");
    try {
      const r = await sh(
        g.policy,
        "echo '#!/bin/sh' > s; install -m 4755 s t; chmod u+s s; chmod 755 s && echo CHMOD-OK; mkdir -p x/y && echo MKDIR-OK",
      );
      expect(r.stdout).toContain("CHMOD-OK");
      expect(r.stdout).toContain("MKDIR-OK");
      for (const name of ["s", "t"]) {
        const path = join(g.ws, name);
        if (existsSync(path)) expect(statSync(path).mode & 0o6000).toBe(0);
      }
    } finally {
      await g.done();
    }
  });

  it("refuses openat2 with ENOSYS, so that libc falls back to openat", async () => {
    const r = await py(
      f.policy,
      "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint('RESULT', libc.syscall(437, -100, b'a.txt', 0, 0), ctypes.get_errno())",
    );
    expect(r.stdout).toContain("RESULT -1 38");
  });

  it("mounts the workspace and /tmp nosuid: an existing setuid file gains nothing", async () => {
    const r = await sh(
      f.policy,
      "grep -E ' (/tmp|/dev/shm|/dev|/proc) | / ' /proc/self/mountinfo; grep -F ' " +
        f.ws +
        " ' /proc/self/mountinfo",
    );
    const lines = r.stdout.trim().split("\n").filter(Boolean);
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) expect(line.split(" ")[5]).toContain("nosuid");
  });
});

describe("limits", () => {
  const FORKS = `
import os, time, signal
pids = []
for i in range(200):
    try:
        pid = os.fork()
    except OSError:
        continue
    if pid == 0:
        time.sleep(600)
        os._exit(0)
    pids.append(pid)
print("STARTED", len(pids))
for pid in pids:
    os.kill(pid, signal.SIGKILL)
print("END")
`;

  it("bounds the number of processes (also as root)", async () => {
    const policy = { ...f.policy, limits: { ...f.policy.limits, processes: 50 } };
    const r = await py(policy, FORKS);
    expect(r.stdout).toContain("END");
    expect(Number(/STARTED (\d+)/.exec(r.stdout)?.[1])).toBeLessThan(50);
  }, 120_000);

  it("ends a fork bomb bounded by the process limit, leaving nothing behind", async () => {
    const marker = `bomb-${process.pid}`;
    const policy = { ...f.policy, limits: { ...f.policy.limits, processes: 50, timeoutMs: 5_000 } };
    const r = await runSandboxed(policy, "bash", ["-c", `b() { b | b & }; b; sleep 100 # ${marker}`]);
    expect(r.timedOut || r.exitCode !== null).toBe(true);
    expect(processesWith(marker)).toEqual([]);
    const after = await sh(f.policy, "echo alive");
    expect(after.stdout).toBe("alive\n");
  }, 120_000);

  it("bounds the private /tmp and /dev/shm by the memory limit: ENOSPC, and the command goes on", async () => {
    const policy = { ...f.policy, limits: { ...f.policy.limits, memoryBytes: 256 * 1024 ** 2 } };
    const r = await sh(
      policy,
      "df -k /tmp /dev/shm | tail -n 2; dd if=/dev/zero of=/tmp/big bs=1M count=400 2>&1 | grep -o 'No space left on device'; echo TMP-AFTER; dd if=/dev/zero of=/dev/shm/big bs=1M count=400 2>&1 | grep -o 'No space left on device'; echo SHM-AFTER",
    );
    expect(r.stdout).toMatch(/No space left on device\nTMP-AFTER\nNo space left on device\nSHM-AFTER/);
    expect(r.stdout).toContain("SHM-AFTER");
    const sizes = [...r.stdout.matchAll(/^\S+\s+(\d+)\s/gm)].map((m) => Number(m[1]));
    expect(sizes.length).toBe(2);
    for (const size of sizes) expect(size * 1024).toBeLessThanOrEqual(256 * 1024 ** 2);
  }, 120_000);
});

describe("host unix sockets", () => {
  let server: Server;
  let connections = 0;
  let base: string;
  let g: SandboxFixture;
  let socketPath: string;

  beforeAll(async () => {
    // The workspace under /tmp, and a host service's socket in a folder beside it.
    g = await makeFixture("/tmp");
    base = realpathSync(mkdtempSync("/tmp/umbra-host-sock-"));
    socketPath = join(base, "agent.sock");
    server = createServer((socket) => {
      connections++;
      socket.end("HOST-SECRET\n");
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    rmSync(base, { recursive: true, force: true });
    await g?.done();
  });

  const connect = (path: string) =>
    `import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect(${JSON.stringify(path)})\nprint(s.recv(100))`;

  it("cannot reach a host socket beside a workspace under /tmp", async () => {
    const r = await py(g.policy, connect(socketPath));
    expect(r.stdout).not.toContain("HOST-SECRET");
    expect(connections).toBe(0);
  });

  it("cannot reach a host socket in a folder that is a readable root under /tmp", async () => {
    const policy = { ...g.policy, readableRoots: [base] };
    const r = await py(policy, connect(socketPath));
    expect(r.stdout).not.toContain("HOST-SECRET");
    expect(connections).toBe(0);
  });

  it("cannot reach a host socket inside a workspace under /tmp that the host bound", async () => {
    const inside = join(g.ws, "dev.sock");
    const host = createServer((socket) => {
      connections++;
      socket.end("HOST-SECRET\n");
    });
    await new Promise<void>((resolve) => host.listen(inside, resolve));
    try {
      const r = await py(g.policy, connect(inside));
      expect(r.stdout).not.toContain("HOST-SECRET");
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((resolve) => host.close(() => resolve()));
    }
  });

  it("still lets the command use unix sockets it makes itself in the workspace and /tmp", async () => {
    const r = await py(
      g.policy,
      `import socket, os
for path in ["own.sock", "/tmp/own.sock"]:
    s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen(1)
    c = socket.socket(socket.AF_UNIX); c.connect(path); a, _ = s.accept(); a.send(b"hi"); print(c.recv(2)); os.unlink(path)`,
    );
    expect(r.stdout).toBe("b'hi'\nb'hi'\n");
  });
});

describe("workspaces in odd places", () => {
  for (const parent of ["/run", "/var/tmp", "/tmp"]) {
    it(`runs with a workspace under ${parent}`, async () => {
      mkdirSync(parent, { recursive: true });
      const g = await makeFixture(parent);
      try {
        const r = await sh(g.policy, "echo ok > made.txt && cat made.txt && ls /run | wc -l");
        expect(r.exitCode).toBe(0);
        expect(r.stdout.split("\n")[0]).toBe("ok");
      } finally {
        await g.done();
      }
    });
  }
});

describe("odd file names", () => {
  it("never refuse a run: protected and hidden paths named with a newline, invalid UTF-8 or 255 bytes", async () => {
    const g = await makeFixture("/var/tmp");
    try {
      const long = "L".repeat(255);
      const names = ["new\nline", long, "tab\tand space"];
      for (const name of names) writeFileSync(join(g.ws, name), "x\n");
      execFileSync("sh", ["-c", `printf x > "$(printf 'bad\\377name')"`], { cwd: g.ws });
      const policy = {
        ...g.policy,
        protectedPaths: [
          ...g.policy.protectedPaths,
          ...names.map((name) => join(g.ws, name)),
          join(g.ws, "absent\nnew", long),
        ],
      };
      const r = await sh(policy, "echo ran; echo y > 'new\nline' 2>/dev/null || echo refused-write");
      expect(r.stdout).toContain("ran");
      expect(r.stdout).toContain("refused-write");
    } finally {
      await g.done();
    }
  });
});
