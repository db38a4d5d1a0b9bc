import { describe, expect, it } from "vitest";
import { deniedBy, explain, formatNotes, type SandboxNote } from "../../src/sandbox/explain.js";
import { DEFAULT_LIMITS } from "../../src/sandbox/policy.js";
import type { Denial, SandboxPolicy, SandboxResult } from "../../src/sandbox/types.js";

const WS = "/home/dev/project";

function policy(overrides: Partial<SandboxPolicy> = {}): SandboxPolicy {
  return {
    mode: "workspace-write",
    workspace: WS,
    writableRoots: [WS, "/home/dev/.npm"],
    hiddenPaths: [`${WS}/secrets`, `${WS}/config/prod.env`, "/home/dev/.ssh"],
    protectedPaths: [
      `${WS}/.git/config`,
      `${WS}/.git/hooks`,
      `${WS}/.vscode`,
      `${WS}/.umbra/config.json`,
      `${WS}/.gitignore`,
      `${WS}/Makefile`,
    ],
    network: false,
    envAllowlist: ["PATH", "HOME"],
    limits: { ...DEFAULT_LIMITS },
    ...overrides,
  };
}

function result(overrides: Partial<SandboxResult> = {}): SandboxResult {
  return {
    exitCode: 1,
    signal: null,
    stdout: "",
    stderr: "",
    timedOut: false,
    cancelled: false,
    outputTruncated: false,
    durationMs: 12,
    denials: [],
    ...overrides,
  };
}

const NETWORK_MESSAGE =
  "Only the sandbox's private loopback is reachable; the host and the internet need --net (servers the command starts on 127.0.0.1 or ::1 work; the host's own localhost services are not reachable). Re-run with network approval (umbra run --net, or ask the user) if the command needs them.";

const rules = (notes: SandboxNote[]) => notes.map((note) => note.rule);
const fromStderr = (stderr: string, p: SandboxPolicy = policy()) => explain(result({ stderr }), p);

describe("exact denials", () => {
  it("explains a network denial with the escalation, naming the private loopback", () => {
    const denials: Denial[] = [{ kind: "network", syscall: "socket", detail: "socket(AF_PACKET) refused" }];
    const notes = explain(result({ denials }), policy());
    expect(notes).toEqual([
      {
        rule: "network",
        blocked: "socket(AF_PACKET) refused",
        escalation: "re-run with network approval (umbra run --net, or ask the user)",
        message: NETWORK_MESSAGE,
      },
    ]);
    expect(notes[0]?.message).toMatch(
      /^Only the sandbox's private loopback is reachable; the host and the internet need --net/,
    );
    // a denial is a fact: noted also when the command went on and succeeded
    expect(rules(explain(result({ exitCode: 0, denials }), policy()))).toEqual(["network"]);
  });

  it("explains a seccomp denial by system call", () => {
    const notes = explain(
      result({ denials: [{ kind: "seccomp", syscall: "ptrace", detail: "" }] }),
      policy(),
    );
    expect(rules(notes)).toEqual(["seccomp"]);
    expect(notes[0]?.blocked).toBe("ptrace");
    expect(notes[0]?.message).toMatch(
      /blocks the `ptrace` system call; it cannot be allowed inside the sandbox/,
    );
    const clone = explain(
      result({
        denials: [{ kind: "seccomp", syscall: "clone", detail: "clone with CLONE_NEWUSER (new namespaces)" }],
      }),
      policy(),
    );
    expect(clone[0]?.message).toMatch(
      /blocks the `clone` system call \(clone with CLONE_NEWUSER \(new namespaces\)\)/,
    );
    const generic = explain(
      result({
        denials: [
          { kind: "seccomp", syscall: "kexec_load", detail: "kexec_load is not allowed in the sandbox" },
        ],
      }),
      policy(),
    );
    expect(generic[0]?.message).toMatch(/blocks the `kexec_load` system call; it cannot/);
  });

  it("explains a filesystem denial by the rule that covers its path", () => {
    const notes = explain(
      result({ denials: [{ kind: "filesystem", detail: "write", path: `${WS}/.git/hooks/pre-commit` }] }),
      policy(),
    );
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ rule: "protected-path", path: `${WS}/.git/hooks/pre-commit` });
    expect(notes[0]?.message).toBe(
      "`.git/hooks` is protected: commands may not change git hooks; ask the user to make this change.",
    );
    const outside = explain(
      result({ denials: [{ kind: "filesystem", detail: "write", path: "/etc/hosts" }] }),
      policy(),
    );
    expect(rules(outside)).toEqual(["outside-writable-roots"]);
    const pathless = explain(result({ denials: [{ kind: "filesystem", detail: "mount" }] }), policy());
    expect(rules(pathless)).toEqual(["outside-writable-roots"]);
  });
});

describe("errno texts on stderr that name a denied path", () => {
  it("protected paths: coreutils, shells, git, node", () => {
    const cases = [
      [
        `touch: cannot touch '${WS}/.git/hooks/pre-commit': Read-only file system`,
        `${WS}/.git/hooks/pre-commit`,
      ],
      ["bash: line 1: .git/hooks/post-checkout: Permission denied", `${WS}/.git/hooks/post-checkout`],
      ["error: could not lock config file .git/config: Permission denied", `${WS}/.git/config`],
      [
        `Error: EROFS: read-only file system, open '${WS}/.vscode/settings.json'`,
        `${WS}/.vscode/settings.json`,
      ],
      ["sh: 1: cannot create .umbra/config.json: Permission denied", `${WS}/.umbra/config.json`],
      ["cp: cannot create regular file 'Makefile': Read-only file system", `${WS}/Makefile`],
      ["rm: cannot remove 'src/.gitignore': Read-only file system", `${WS}/src/.gitignore`],
      ["touch: cannot touch 'team.code-workspace': Permission denied", `${WS}/team.code-workspace`],
      ["mkdir: cannot create directory ‘.umbra/cache’: Read-only file system", `${WS}/.umbra/cache`],
    ] as const;
    for (const [line, path] of cases) {
      const notes = fromStderr(`${line}\n`);
      expect(rules(notes), line).toEqual(["protected-path"]);
      expect(notes[0]?.path, line).toBe(path);
    }
    const vscode = fromStderr(cases[3][0]);
    expect(vscode[0]?.message).toBe(
      "`.vscode` is protected: commands may not change editor settings; ask the user to make this change.",
    );
    expect(fromStderr(cases[0][0])[0]?.blocked).toBe("write to .git/hooks/pre-commit");
  });

  it("agent-writable .umbra folders are not protected", () => {
    expect(fromStderr("touch: cannot touch '.umbra/rules/x.md': Permission denied")).toEqual([]);
  });

  it("hidden paths, read or written", () => {
    const cases = [
      "cat: secrets/prod.key: Permission denied",
      `Error: EACCES: permission denied, open '${WS}/config/prod.env'`,
      "PermissionError: [Errno 13] Permission denied: '/home/dev/.ssh/id_ed25519'",
      "open /home/dev/project/secrets/db.json: permission denied",
    ];
    for (const line of cases) expect(rules(fromStderr(line)), line).toEqual(["hidden-path"]);
    const [note] = fromStderr(cases[0] as string);
    expect(note?.message).toMatch(
      /^`secrets` is hidden from the sandbox \(it matches the workspace's \.umbraignore/,
    );
    expect(note?.blocked).toBe("access to secrets/prod.key");
    expect(fromStderr(cases[2] as string)[0]?.message).toMatch(
      /^`\/home\/dev\/\.ssh` is hidden .*holds credentials/,
    );
  });

  it("writes outside the writable roots", () => {
    const cases = [
      "mkdir: cannot create directory ‘/home/dev/.config/tool’: Read-only file system",
      "go: creating work dir: mkdir /home/dev/.cache/go-build/ab: read-only file system",
      "touch: cannot touch '/opt/data/out.txt': Permission denied",
      "npm ERR! Error: EACCES: permission denied, mkdir '/usr/lib/node_modules/x'",
      "OSError: [Errno 30] Read-only file system: '/var/lib/thing'",
    ];
    for (const line of cases) expect(rules(fromStderr(line)), line).toEqual(["outside-writable-roots"]);
    const [note] = fromStderr(cases[0] as string);
    expect(note?.message).toMatch(
      /^`\/home\/dev\/\.config\/tool` is outside the folders the sandbox lets commands write/,
    );
    expect(note?.escalation).toMatch(/sandbox\.writableRoots/);
  });

  it("any write in read-only mode", () => {
    const readOnly = policy({ mode: "read-only", writableRoots: [] });
    const notes = fromStderr("sh: 1: cannot create out.txt: Read-only file system", readOnly);
    expect(rules(notes)).toEqual(["read-only-mode"]);
    expect(notes[0]?.path).toBe(`${WS}/out.txt`);
    expect(notes[0]?.message).toMatch(/read-only mode.*without --read-only/);
    // writes to /tmp are allowed in every mode
    expect(fromStderr("touch: cannot touch '/tmp/x': Read-only file system", readOnly)).toEqual([]);
    // ... but a workspace under /tmp is still the workspace
    const inTmp = policy({ mode: "read-only", workspace: "/tmp/ws", writableRoots: [] });
    expect(rules(fromStderr("sh: 1: cannot create new.txt: Read-only file system", inTmp))).toEqual([
      "read-only-mode",
    ]);
  });

  it("reads a write from the message around a quoted path, and a hostile line at once", () => {
    const tool = "/home/dev/.config/tool";
    const paths = (stderr: string) => fromStderr(stderr).map((note) => [note.rule, note.path]);
    expect(paths(`sed: cannot open '${tool}/a' for writing: Permission denied`)).toEqual([
      ["outside-writable-roots", `${tool}/a`],
    ]);
    expect(paths(`sed: cannot open '${tool}/a': Permission denied`)).toEqual([]); // a read
    expect(paths(`sed: cannot open '${tool}/a' cannot open for writing: Permission denied`)).toEqual([
      ["outside-writable-roots", `${tool}/a`],
    ]);
    expect(paths(`cp: cannot open ‘${tool}/b’ for writing: Permission denied`)).toEqual([
      ["outside-writable-roots", `${tool}/b`],
    ]);
    expect(paths(`cp: cannot create “${tool}/c”: Permission denied`)).toEqual([
      ["outside-writable-roots", `${tool}/c`],
    ]);
    // One line of output with many `can't open`, or many opening quotes, none closed: each was read on
    // to the line's end (up to a megabyte of stderr is read: seconds to minutes).
    expect(fromStderr(`permission denied ${"can't open ".repeat(60_000)}`)).toEqual([]);
    expect(fromStderr(`permission denied ${"“‘".repeat(60_000)}`)).toEqual([]);
  }, 10_000);

  it("resolves relative paths against the command's cwd", () => {
    const notes = explain(result({ stderr: "bash: hooks/pre-push: Read-only file system" }), policy(), {
      cwd: `${WS}/.git`,
    });
    expect(notes[0]?.path).toBe(`${WS}/.git/hooks/pre-push`);
  });

  it("one note per path", () => {
    const stderr = [
      `Error: EROFS: read-only file system, open '${WS}/.git/hooks/pre-commit'`,
      `  errno: -30, code: 'EROFS', syscall: 'open', path: '${WS}/.git/hooks/pre-commit'`,
      `touch: cannot touch '${WS}/.git/hooks/pre-commit': Read-only file system`,
    ].join("\n");
    const notes = explain(
      result({
        stderr,
        denials: [{ kind: "filesystem", detail: "write", path: `${WS}/.git/hooks/pre-commit` }],
      }),
      policy(),
    );
    expect(rules(notes)).toEqual(["protected-path"]);
  });
});

describe("no false alarms", () => {
  it("ordinary failures get no note", () => {
    const ordinary = [
      "cat: missing.txt: No such file or directory",
      "FAIL test/math.test.ts > adds\nAssertionError: expected 1 to be 2",
      "cat: /etc/shadow: Permission denied", // a read the policy allows
      "touch: cannot touch 'src/generated.ts': Permission denied", // inside the writable workspace
      "PermissionError: [Errno 13] Permission denied: '/home/dev/project/build/out'",
      "bash: ./run.sh: Permission denied", // not executable
      "Error: EACCES: permission denied, open '/root/.bashrc'", // a read outside the roots
      "  errno: -30, code: 'EROFS', syscall: 'open'",
      "touch: cannot touch '/tmp/cache/x': Read-only file system",
      "ptrace: Operation not permitted", // no path, no exact denial
      "warning: Permission denied is a phrase in this log line",
      "npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/nope",
      "mkdir: cannot create directory '/home/dev/.npm/_cacache': File exists",
      "touch: cannot touch '/home/dev/.npm/x': Permission denied", // a writable cache
    ];
    for (const stderr of ordinary) expect(fromStderr(stderr), stderr).toEqual([]);
  });

  it("full-access mode blocks nothing the stderr could show", () => {
    const full = policy({
      mode: "full-access",
      writableRoots: ["/"],
      hiddenPaths: [],
      protectedPaths: [],
      network: true,
    });
    expect(fromStderr("touch: cannot touch '/opt/x': Permission denied", full)).toEqual([]);
    expect(fromStderr("bash: .git/hooks/x: Permission denied", full)).toEqual([]);
    expect(fromStderr("connect ENETUNREACH 1.2.3.4:443", full)).toEqual([]);
  });

  it("a successful run gets no note", () => {
    expect(explain(result({ exitCode: 0, stdout: "ok\n" }), policy())).toEqual([]);
  });
});

describe("network errors when the network is off", () => {
  it("notes unreachable networks and failed name lookups once", () => {
    for (const stderr of [
      "Error: connect ENETUNREACH 10.0.0.1:4000",
      "getaddrinfo EAI_AGAIN registry.npmjs.org",
      "curl: (6) Could not resolve host: example.com",
      "ping: connect: Network is unreachable",
      "pip: Temporary failure in name resolution\nTemporary failure in name resolution",
    ]) {
      expect(rules(fromStderr(stderr)), stderr).toEqual(["network"]);
    }
  });

  it("says nothing when the network was allowed", () => {
    expect(fromStderr("Error: connect ENETUNREACH 10.0.0.1:443", policy({ network: true }))).toEqual([]);
  });

  it("says nothing of a refused connection on the loopback: an ordinary failure", () => {
    expect(fromStderr("Error: connect ECONNREFUSED 127.0.0.1:4000")).toEqual([]);
    expect(fromStderr("ConnectionRefusedError: [Errno 111] Connection refused")).toEqual([]);
  });

  it("says nothing when the command succeeded in spite of a failed lookup (npx tsc, an update check)", () => {
    for (const stderr of [
      "npm WARN getaddrinfo EAI_AGAIN registry.npmjs.org",
      "warning: could not resolve host: proxy.golang.org",
    ])
      expect(explain(result({ exitCode: 0, stderr }), policy()), stderr).toEqual([]);
  });
});

describe("limits", () => {
  it("time-outs and cut output", () => {
    const notes = explain(
      result({ exitCode: null, signal: "SIGKILL", timedOut: true, outputTruncated: true }),
      policy({ limits: { ...DEFAULT_LIMITS, timeoutMs: 30_000 } }),
    );
    expect(rules(notes)).toEqual(["limit", "limit"]);
    expect(notes[0]?.message).toMatch(/time limit of 30 s.*--timeout SECONDS/);
    expect(notes[1]?.message).toMatch(/limit of 16 MiB/);
  });

  it("CPU time and process limits", () => {
    expect(rules(explain(result({ exitCode: null, signal: "SIGXCPU" }), policy()))).toEqual(["limit"]);
    const forks = fromStderr("bash: fork: retry: Resource temporarily unavailable");
    expect(rules(forks)).toEqual(["limit"]);
    expect(forks[0]?.message).toMatch(/1024/);
  });

  it("a cancelled run is not a limit", () => {
    expect(explain(result({ exitCode: null, signal: "SIGKILL", cancelled: true }), policy())).toEqual([]);
  });
});

describe("deniedBy and formatNotes", () => {
  it("classifies paths", () => {
    const p = policy();
    expect(deniedBy(p, `${WS}/secrets/a`, "any")?.rule).toBe("hidden-path");
    expect(deniedBy(p, `${WS}/.git/hooks`, "write")?.rule).toBe("protected-path");
    expect(deniedBy(p, `${WS}/.git/objects/ab`, "write")).toBeUndefined();
    expect(deniedBy(p, `${WS}/.gitignore-notes`, "write")).toBeUndefined();
    expect(deniedBy(p, "/etc/hosts", "any")).toBeUndefined();
    expect(deniedBy(p, "/etc/hosts", "write")?.rule).toBe("outside-writable-roots");
    expect(deniedBy(p, "/dev/null", "write")).toBeUndefined();
  });

  it("prints one `umbra: sandbox:` line per note", () => {
    const notes = explain(result({ denials: [{ kind: "network", detail: "connect" }] }), policy());
    expect(formatNotes(notes)).toBe(`umbra: sandbox: ${NETWORK_MESSAGE}\n`);
  });
});
