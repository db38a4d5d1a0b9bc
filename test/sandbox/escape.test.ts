/**
 * Escape probes: each tries one way out of the sandbox and must be blocked. The workspace and a folder
 * outside it are fingerprinted before every probe and must be unchanged after it (except where a probe
 * says otherwise). Network probes only target listeners this test starts on this machine.
 */
import { execFileSync, spawn } from "node:child_process";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { type AddressInfo, createServer, type Server } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runSandboxed } from "../../src/sandbox/run.js";
import type { SandboxResult } from "../../src/sandbox/types.js";
import { fork } from "../../src/shadow/index.js";
import {
  ensureHelper,
  HELPER,
  makeFixture,
  processesWith,
  py,
  type SandboxFixture,
  sh,
  snapshot,
} from "./helpers.js";

let f: SandboxFixture;
let before: { ws: string; outside: string };

const PY_SYSCALL = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(*args):
    r = libc.syscall(*[ctypes.c_ulong(a) for a in args])
    print("RESULT", r, ctypes.get_errno())
`;

/** Runs a raw system call in the sandbox; it must fail with EPERM and be recorded. */
async function expectSyscallDenied(name: string, call: string, prelude = ""): Promise<SandboxResult> {
  const result = await py(f.policy, `${PY_SYSCALL}\n${prelude}\n${call}`);
  expect(result.stdout).toContain("RESULT -1 1");
  expect(result.denials.map((d) => d.syscall)).toContain(name);
  return result;
}

beforeAll(async () => {
  ensureHelper();
  // Outside the OS temp folder: the sandbox's /tmp is private, so /var/tmp is where outside files show.
  f = await makeFixture("/var/tmp");
  writeFileSync(join(f.outside, "target.txt"), "outside target\n");
  symlinkSync(f.outside, join(f.ws, "planted-link"));
  before = { ws: await snapshot(f.ws), outside: await snapshot(f.outside) };
});

afterAll(async () => {
  await f?.done();
});

afterEach(async () => {
  expect(await snapshot(f.outside)).toBe(before.outside);
  expect(await snapshot(f.ws)).toBe(before.ws);
});

describe("filesystem", () => {
  it("cannot write outside the workspace", async () => {
    const r = await sh(
      f.policy,
      `echo x > ${f.outside}/new.txt; echo x > /etc/umbra-probe; echo x >> ${f.outside}/keep.txt`,
    );
    expect(r.stderr).toMatch(/Read-only file system/);
    expect(existsSync("/etc/umbra-probe")).toBe(false);
  });

  it("cannot write through a symlink planted in the workspace", async () => {
    const r = await sh(f.policy, `echo x > planted-link/new.txt; echo x >> planted-link/keep.txt`);
    expect(r.stderr).toMatch(/Read-only file system/);
  });

  it("cannot write through a symlink it makes itself", async () => {
    const r = await sh(
      f.policy,
      `ln -s ${f.outside} mine && echo x > mine/new.txt; s=$?; rm -f mine; exit $s`,
    );
    expect(r.exitCode).not.toBe(0);
  });

  it("cannot write through /proc/self/root", async () => {
    const r = await sh(f.policy, `echo x > /proc/self/root${f.outside}/new.txt`);
    expect(r.exitCode).not.toBe(0);
  });

  it("cannot write through /proc/self/cwd", async () => {
    const r = await sh(f.policy, `cd ${f.outside} && echo x > /proc/self/cwd/new.txt`);
    expect(r.exitCode).not.toBe(0);
  });

  it("cannot rename a workspace file out of the workspace", async () => {
    const r = await sh(f.policy, `mv a.txt ${f.outside}/a.txt`);
    expect(r.exitCode).not.toBe(0);
  });

  it("cannot hardlink an outside file into the workspace", async () => {
    const r = await sh(
      f.policy,
      `ln ${f.outside}/target.txt hl.txt || ln /etc/passwd hl.txt; test ! -e hl.txt`,
    );
    expect(r.exitCode).toBe(0);
  });

  it("cannot read an ignored file", async () => {
    const r = await sh(f.policy, `cat secret.env; head -c 100 /proc/self/root${f.ws}/secret.env`);
    expect(r.stdout).not.toContain("top-secret");
    expect(r.stderr).toMatch(/Permission denied/);
  });

  it("cannot list or read an ignored folder", async () => {
    const r = await sh(f.policy, `ls secrets; cat secrets/key.txt; find secrets -type f`);
    expect(r.stdout).not.toContain("key.txt");
    expect(r.stdout).not.toContain("top-secret");
  });

  it("cannot change, truncate, remove or rename an ignored file", async () => {
    await sh(
      f.policy,
      `echo x >> secret.env; : > secret.env; rm -f secret.env; mv secret.env s.env; rm -rf secrets; mv secrets s2`,
    );
    expect(readFileSync(join(f.ws, "secret.env"), "utf8")).toBe("API_KEY=top-secret-value\n");
  });

  it("cannot chmod the stand-in that hides an ignored file", async () => {
    const r = await sh(f.policy, `chmod 644 secret.env; cat secret.env`);
    expect(r.stdout).not.toContain("top-secret");
  });

  it("cannot write .git/hooks", async () => {
    const r = await sh(
      f.policy,
      `echo 'touch /tmp/pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`,
    );
    expect(r.stderr).toMatch(/Read-only file system/);
  });

  it("cannot change .git/config (directly or with git config)", async () => {
    const r = await sh(
      f.policy,
      `echo '[core] hooksPath=/tmp' >> .git/config; git config core.hooksPath /tmp`,
    );
    expect(r.exitCode).not.toBe(0);
  });

  it("cannot rename .git away and plant a new one", async () => {
    const r = await sh(
      f.policy,
      `mv .git .git-old; mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit; test -d .git-old`,
    );
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/busy|Read-only/);
  });

  // In the user's own folder the helper makes no placeholders: what a command makes at an absent
  // protected path there is moved out after the run (test/sandbox/absent-protected.test.ts).
  it("cannot create absent protected paths in a branch (.vscode, .idea, .umbra/config.json, .cursorignore)", async () => {
    const branch = await fork(f.ws, {
      mode: "copy",
      env: { ...process.env, UMBRA_HOME: join(f.base, "data") },
    });
    try {
      const r = await sh(
        f.policy,
        `mkdir -p .vscode && echo '{}' > .vscode/settings.json; echo x > .idea/workspace.xml; mkdir -p .umbra && echo '{}' > .umbra/config.json; echo '!*' > .cursorignore; echo done`,
        { branch },
      );
      expect(r.stderr).toMatch(/Read-only file system/);
      expect(await branch.changes()).toEqual([]);
    } finally {
      await branch.discard();
    }
  });

  it("cannot change or remove the ignore files", async () => {
    const r = await sh(
      f.policy,
      `echo '!*' >> .umbraignore; rm -f .umbraignore; mv .gitignore gi; echo '' > .gitignore`,
    );
    expect(r.exitCode).not.toBe(0);
  });

  it("cannot write /proc/sys", async () => {
    const r = await sh(
      f.policy,
      `echo 1 > /proc/sys/kernel/sysrq || echo 1 > /proc/sys/vm/overcommit_memory`,
    );
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/Read-only file system|Permission denied/);
  });

  it("cannot make device nodes", async () => {
    const r = await sh(f.policy, `mknod /tmp/mem c 1 1 || mknod dev-null c 1 3; test ! -e dev-null`);
    expect(r.stderr).toMatch(/not permitted/);
  });

  it("sees no host block devices", async () => {
    const r = await sh(
      f.policy,
      `ls /dev; for d in /dev/vda /dev/sda /dev/nvme0n1 /dev/mem /dev/kmsg; do head -c1 $d && echo READ $d; done`,
    );
    expect(r.stdout).not.toContain("READ");
    expect(r.stdout).not.toMatch(/\bvda\b|\bsda\b|\bmem\b/);
  });
});

/**
 * A sleep duration that names this test process (`N.PPPPPPP`, the pid in seven digits): processes are
 * looked for machine-wide, and another suite running these tests at the same time has other markers.
 */
function mark(n: number): string {
  return `${n}.${String(process.pid).padStart(7, "0")}`;
}

describe("processes", () => {
  it("gets no inherited descriptors beyond stdin, stdout and stderr", async () => {
    const r = await sh(
      f.policy,
      `ls /proc/self/fd; for n in 3 4 5 6 7 8 9; do (echo x >&$n) 2>/dev/null && echo WROTE $n; done; true`,
    );
    expect(r.stdout.trim().split("\n").slice(0, 4)).toEqual(["0", "1", "2", "3"]); // 3: the listing itself
    expect(r.stdout).not.toContain("WROTE");
  });

  it("cannot ptrace its parent", async () => {
    await expectSyscallDenied("ptrace", "import os; sc(101, 16, os.getppid(), 0, 0)"); // PTRACE_ATTACH
  });

  it("cannot read another process's memory with process_vm_readv", async () => {
    await expectSyscallDenied("process_vm_readv", "import os; sc(310, os.getppid(), 0, 0, 0, 0, 0)");
  });

  it("gets no secrets in its environment or in /proc/*/environ", async () => {
    const env = {
      ...process.env,
      OPENAI_API_KEY: "sk-probe-secret",
      GITHUB_TOKEN: "ghp-probe-secret",
      MY_PASSWORD: "pw-probe",
    };
    const r = await sh(f.policy, `env; cat /proc/*/environ | tr '\\0' '\\n'`, { env });
    expect(r.stdout).not.toMatch(/probe-secret|pw-probe/);
    expect(r.stdout).toContain("PATH=");
  });

  it("cannot mount", async () => {
    const r = await expectSyscallDenied("mount", `sc(165, 0, 0, 0, 0, 0)`);
    expect(r.exitCode).toBe(0);
    const m = await sh(f.policy, `mount -t tmpfs none /tmp 2>&1; umount /proc 2>&1; true`);
    expect(m.stdout).toMatch(/denied|not permitted|must be superuser/i);
  });

  it("cannot create a user namespace (unshare, clone, clone3)", async () => {
    await expectSyscallDenied("unshare", "sc(272, 0x10000000)");
    await expectSyscallDenied("clone", "sc(56, 0x10000000 | 17, 0, 0, 0, 0)");
    const r = await py(f.policy, `${PY_SYSCALL}\nsc(435, 0, 0)`);
    expect(r.stdout).toContain("RESULT -1 38"); // clone3: ENOSYS
  });

  it("cannot join other namespaces with setns", async () => {
    await expectSyscallDenied(
      "setns",
      "import os; fd = os.open('/proc/self/ns/mnt', os.O_RDONLY); sc(308, fd, 0)",
    );
  });

  it("cannot chroot", async () => {
    await expectSyscallDenied("chroot", "sc(161, id(b'/tmp\\0') and 0)");
  });

  it("cannot inject terminal input with TIOCSTI (also with upper bits set) or TIOCLINUX", async () => {
    await expectSyscallDenied(
      "ioctl",
      "import ctypes; c = ctypes.c_char(b'x'); sc(16, 0, 0x5412, ctypes.addressof(c))",
    );
    const upper = await expectSyscallDenied(
      "ioctl",
      "import ctypes; c = ctypes.c_char(b'x'); sc(16, 0, 0xdead00005412, ctypes.addressof(c))",
    );
    expect(upper.denials.find((d) => d.syscall === "ioctl")?.detail).toContain("TIOCSTI");
    await expectSyscallDenied("ioctl", "sc(16, 0, 0x541c, 0)");
  });

  it("cannot use io_uring", async () => {
    await expectSyscallDenied(
      "io_uring_setup",
      "import ctypes; p = ctypes.create_string_buffer(120); sc(425, 8, ctypes.addressof(p))",
    );
  });

  it("cannot use bpf, perf_event_open or keyctl", async () => {
    await expectSyscallDenied("bpf", "sc(321, 0, 0, 0)");
    await expectSyscallDenied(
      "perf_event_open",
      "sc(298, 0, 0, -1 & 0xffffffffffffffff, -1 & 0xffffffffffffffff, 0)",
    );
    await expectSyscallDenied("keyctl", "sc(250, 0, 0, 0)");
  });

  it("keeps no capabilities and runs with no_new_privs and seccomp", async () => {
    const r = await sh(
      f.policy,
      `grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' /proc/self/status`,
    );
    for (const line of r.stdout.trim().split("\n")) {
      if (line.startsWith("Cap")) expect(line).toMatch(/:\s+0{16}$/);
    }
    expect(r.stdout).toMatch(/NoNewPrivs:\s+1/);
    expect(r.stdout).toMatch(/Seccomp:\s+2/);
  });

  it("cannot see or signal host processes", async () => {
    const victim = spawn("sleep", [mark(3215)], { stdio: "ignore" });
    try {
      const r = await sh(f.policy, `ls /proc | grep -c '^[0-9]'; kill -9 ${victim.pid}; echo rc=$?`);
      expect(Number(r.stdout.split("\n")[0])).toBeLessThan(10);
      expect(victim.exitCode).toBeNull();
      expect(processesWith(mark(3215)).length).toBe(1);
    } finally {
      victim.kill("SIGKILL");
    }
  });

  it("leaves no daemon behind when the command ends", async () => {
    const r = await sh(
      f.policy,
      `(setsid sleep ${mark(9875)} &); nohup sleep ${mark(9876)} >/dev/null 2>&1 & echo started`,
    );
    expect(r.stdout).toContain("started");
    await new Promise((done) => setTimeout(done, 200));
    expect(processesWith(mark(9875))).toEqual([]);
    expect(processesWith(mark(9876))).toEqual([]);
  });

  it("kills the whole tree on timeout", async () => {
    const policy = { ...f.policy, limits: { ...f.policy.limits, timeoutMs: 800 } };
    const r = await sh(policy, `(setsid sleep ${mark(6543)} &); sleep ${mark(6544)}`);
    expect(r.timedOut).toBe(true);
    await new Promise((done) => setTimeout(done, 200));
    expect(processesWith(mark(6543))).toEqual([]);
    expect(processesWith(mark(6544))).toEqual([]);
  });

  it("kills the whole tree when cancelled", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    const r = await sh(f.policy, `(setsid sleep ${mark(6553)} &); sleep ${mark(6554)}`, {
      signal: controller.signal,
    });
    expect(r.cancelled).toBe(true);
    await new Promise((done) => setTimeout(done, 200));
    expect(processesWith(mark(6553))).toEqual([]);
    expect(processesWith(mark(6554))).toEqual([]);
  });
});

describe("network", () => {
  let tcp: Server;
  let unixPath: Server;
  let abstract: Server;
  let udp: UdpSocket;
  let connections = 0;
  let datagrams = 0;
  let port = 0;
  let udpPort = 0;
  const abstractName = `\0umbra-probe-${process.pid}`;
  let socketPath = "";

  beforeAll(async () => {
    const listen = (server: Server, where: number | string) =>
      new Promise<void>((done) => {
        server.on("connection", (socket) => {
          connections++;
          socket.destroy();
        });
        if (typeof where === "number") server.listen(where, "127.0.0.1", () => done());
        else server.listen(where, () => done());
      });
    tcp = createServer();
    await listen(tcp, 0);
    const address = tcp.address();
    port = typeof address === "object" && address ? address.port : 0;
    mkdirSync(join(f.base, "sock"));
    socketPath = join(f.base, "sock", "host.sock");
    unixPath = createServer();
    await listen(unixPath, socketPath);
    abstract = createServer();
    await listen(abstract, abstractName);
    udp = createSocket("udp4");
    udp.on("message", () => datagrams++);
    await new Promise<void>((done) => udp.bind(0, "127.0.0.1", () => done()));
    udpPort = udp.address().port;
  });

  afterAll(() => {
    tcp?.close();
    unixPath?.close();
    abstract?.close();
    udp?.close();
  });

  it("cannot open a TCP connection to a host loopback listener: 127.0.0.1 is the sandbox's own", async () => {
    const r = await py(
      f.policy,
      `import socket\ntry:\n    socket.create_connection(("127.0.0.1", ${port}), timeout=10)\n    print("CONNECTED")\nexcept OSError as e:\n    print("ERRNO", e.errno)`,
    );
    expect(r.stdout).toBe("ERRNO 111\n"); // ECONNREFUSED: nothing listens on the private loopback
    expect(connections).toBe(0);
  });

  it("cannot reach a host listener through the host's other addresses", async () => {
    const addresses = Object.values(networkInterfaces())
      .flat()
      .filter((entry) => entry !== undefined && !entry.internal && entry.family === "IPv4")
      .map((entry) => entry?.address);
    const wide = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((done) => wide.listen(0, "0.0.0.0", () => done()));
    const widePort = (wide.address() as AddressInfo).port;
    try {
      // and one beyond the host: TEST-NET-1, reserved for documentation, routed nowhere
      const targets = [...addresses, "192.0.2.1"];
      const r = await py(
        f.policy,
        `import socket\nfor host in ${JSON.stringify(targets)}:\n    try:\n        socket.create_connection((host, ${widePort}), timeout=10)\n        print("CONNECTED", host)\n    except OSError as e:\n        print("ERRNO", e.errno)`,
      );
      expect(r.stdout).toBe("ERRNO 101\n".repeat(targets.length)); // ENETUNREACH: only lo, no route
      expect(connections).toBe(0);
    } finally {
      wide.close();
    }
  });

  it("cannot send UDP to a host loopback listener", async () => {
    const r = await py(
      f.policy,
      `import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.sendto(b"x", ("127.0.0.1", ${udpPort}))\nprint("SENT")`,
    );
    expect(r.stdout).toBe("SENT\n"); // into the sandbox's own loopback
    // A marker sent after it from here arrives alone: the sandbox's datagram went elsewhere.
    const marker = createSocket("udp4");
    const arrived = new Promise<void>((done) =>
      udp.on("message", (message) => {
        if (message.toString() === "marker") done();
      }),
    );
    marker.send("marker", udpPort, "127.0.0.1");
    await arrived;
    marker.close();
    expect(datagrams).toBe(1);
  });

  it("sees only its own loopback, up, and cannot change the network", async () => {
    const r = await py(
      f.policy,
      [
        "import fcntl, socket, struct",
        "print(socket.if_nameindex())",
        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
        "ifr = lambda flags: struct.pack('16sH22x', b'lo', flags)",
        "flags = struct.unpack('16sH22x', fcntl.ioctl(s, 0x8913, ifr(0)))[1]  # SIOCGIFFLAGS",
        "print('UP' if flags & 1 else 'DOWN')",
        "# SIOCSIFFLAGS (lo down), SIOCSIFADDR, SIOCADDRT (a route)",
        "for request, arg in ((0x8914, ifr(flags & ~1)), (0x8916, bytes(40)), (0x890B, bytes(120))):",
        "    try:",
        "        fcntl.ioctl(s, request, arg)",
        "        print('CHANGED', hex(request))",
        "    except OSError as e:",
        "        print('ERRNO', e.errno)",
      ].join("\n"),
    );
    expect(r.stdout).toBe("[(1, 'lo')]\nUP\nERRNO 1\nERRNO 1\nERRNO 1\n"); // EPERM: no capabilities
  });

  it("cannot open raw, packet, vsock, crypto or non-route netlink sockets", async () => {
    const r = await py(
      f.policy,
      `import socket\nfor fam, typ, proto in ((socket.AF_INET, socket.SOCK_RAW, 1), (socket.AF_INET6, socket.SOCK_RAW, 58), (socket.AF_PACKET, socket.SOCK_RAW, 0), (socket.AF_NETLINK, socket.SOCK_RAW, 9), (40, socket.SOCK_STREAM, 0), (38, socket.SOCK_SEQPACKET, 0)):\n    try:\n        socket.socket(fam, typ, proto)\n        print("OPENED", fam)\n    except OSError as e:\n        print("BLOCKED", fam, e.errno)`,
    );
    expect(r.stdout).not.toContain("OPENED");
    const details = r.denials.filter((d) => d.kind === "network").map((d) => d.detail);
    expect(details.join(" ")).toMatch(
      /AF_INET, SOCK_RAW.*AF_INET6, SOCK_RAW.*AF_PACKET.*AF_NETLINK, protocol 9.*AF_VSOCK.*AF_ALG/,
    );
  });

  it("gives two sandboxes their own loopbacks: both listen on the host listener's port at once", async () => {
    const ready = (name: string) => join(f.ws, `.listening-${name}`);
    const serve = (name: string, other: string) =>
      py(
        { ...f.policy, limits: { ...f.policy.limits, timeoutMs: 120_000 } },
        [
          "import os, socket, time",
          `s = socket.socket(); s.bind(("127.0.0.1", ${port})); s.listen()`,
          `open(${JSON.stringify(ready(name))}, "w").close()`,
          `while not os.path.exists(${JSON.stringify(ready(other))}): time.sleep(0.05)`,
          `c = socket.create_connection(("127.0.0.1", ${port})); peer, _ = s.accept()`,
          `peer.sendall(b${JSON.stringify(name)}); print("SERVED", c.recv(10).decode())`,
        ].join("\n"),
      );
    try {
      const [a, b] = await Promise.all([serve("a", "b"), serve("b", "a")]);
      expect(a.stdout).toBe("SERVED a\n");
      expect(b.stdout).toBe("SERVED b\n");
      expect(connections).toBe(0);
    } finally {
      for (const name of ["a", "b"]) rmSync(ready(name), { force: true });
    }
  }, 150_000);

  it("cannot reach a host service on an abstract unix socket", async () => {
    const r = await py(
      f.policy,
      `import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect("\\0${abstractName.slice(1)}")\nprint("CONNECTED")`,
    );
    expect(r.stdout).not.toContain("CONNECTED");
    expect(connections).toBe(0);
  });

  it("cannot reach a host service on an abstract unix socket even with network on", async () => {
    const policy = { ...f.policy, network: true };
    const r = await py(
      policy,
      `import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect("\\0${abstractName.slice(1)}")\nprint("CONNECTED")`,
    );
    expect(r.stdout).not.toContain("CONNECTED");
    expect(connections).toBe(0);
  });

  it("cannot reach a host service on a path unix socket", async () => {
    const r = await py(
      f.policy,
      `import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect("${socketPath}")\nprint("CONNECTED")`,
    );
    expect(r.stdout).not.toContain("CONNECTED");
    expect(connections).toBe(0);
  });

  it("sees nothing of /run or /var/run", async () => {
    const r = await sh(f.policy, `ls -A /run /var/run | grep -v ':$' | grep -c . ; true`);
    expect(r.stdout.trim()).toBe("0");
  });
});

describe("as an ordinary user", () => {
  let g: SandboxFixture;
  let wrapper: string;
  const saved = process.env.UMBRA_HELPER;
  const savedHome = process.env.UMBRA_HOME;

  beforeAll(async () => {
    g = await makeFixture("/var/tmp", 0o755);
    execFileSync("chown", ["-R", "65534:65534", g.ws]);
    // The helper journals placeholders in umbra's data directory, which is the helper's user's own.
    const data = join(g.base, "data");
    mkdirSync(data);
    execFileSync("chown", ["65534:65534", data]);
    process.env.UMBRA_HOME = data;
    const bin = join(g.base, "bin");
    mkdirSync(bin);
    copyFileSync(HELPER, join(bin, "umbra-helper"));
    chmodSync(join(bin, "umbra-helper"), 0o755);
    wrapper = join(bin, "as-nobody");
    writeFileSync(
      wrapper,
      `#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups ${join(bin, "umbra-helper")} "$@"\n`,
      { mode: 0o755 },
    );
    process.env.UMBRA_HELPER = wrapper;
  });

  afterAll(async () => {
    if (saved === undefined) delete process.env.UMBRA_HELPER;
    else process.env.UMBRA_HELPER = saved;
    if (savedHome === undefined) delete process.env.UMBRA_HOME;
    else process.env.UMBRA_HOME = savedHome;
    await g?.done();
  });

  it("runs rootless and keeps every rule", async () => {
    const r = await sh(
      g.policy,
      `id -u; echo ok > made.txt && cat made.txt; cat secret.env; echo x > ${g.outside}/new.txt; echo x > .git/hooks/pre-commit; grep CapEff /proc/self/status; python3 -c 'import ctypes; ctypes.CDLL(None).unshare(0x10000000)'`,
    );
    expect(r.stdout).toMatch(/^65534\nok\n/);
    expect(r.stdout).not.toContain("top-secret");
    expect(r.stdout).toMatch(/CapEff:\s+0{16}/);
    expect(existsSync(join(g.outside, "new.txt"))).toBe(false);
    expect(existsSync(join(g.ws, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(r.denials.map((d) => d.syscall)).toContain("unshare");
    expect(readFileSync(join(g.ws, "made.txt"), "utf8")).toBe("ok\n");
  });
});

describe("planted symlinks over protected paths", () => {
  it("keeps a .git/hooks symlink (planted before the run) read-only", async () => {
    const g = await makeFixture("/var/tmp");
    try {
      execFileSync("rm", ["-rf", join(g.ws, ".git", "hooks")]);
      symlinkSync(g.outside, join(g.ws, ".git", "hooks"));
      const r = await runSandboxed(g.policy, "sh", [
        "-c",
        "echo evil > .git/hooks/pre-commit; echo x > .git/hooks/keep.txt",
      ]);
      expect(r.exitCode).not.toBe(0);
      expect(existsSync(join(g.outside, "pre-commit"))).toBe(false);
      expect(readFileSync(join(g.outside, "keep.txt"), "utf8")).toBe("outside\n");
    } finally {
      await g.done();
    }
  });
});
