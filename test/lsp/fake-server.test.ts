import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLspError, LspError } from "../../src/lsp/errors.js";
import { LspHost } from "../../src/lsp/host.js";
import type { LanguageDefinition } from "../../src/lsp/registry.js";
import { fakeLspScript } from "../fakes/fake-lsp-script.js";
import { waitUntil } from "../helpers/wait.js";
import { cleanup, fingerprint, tempDir } from "../helpers/workspace.js";
import { isRunning, MemoryBranch, writeTree } from "./helpers.js";

let dir: string;
let root: string;
let script: string;
const hosts: LspHost[] = [];

function fakeLanguage(...flags: string[]): LanguageDefinition {
  return {
    id: "fake",
    name: "Fake",
    extensions: { ".fake": "fake" },
    markers: ["fake.json"],
    resolveServer: () => ({ command: process.execPath, args: [script, ...flags], description: "fake-lsp" }),
    resend: "bump",
    dependents: "none",
  };
}

function host(flags: string[], config: ConstructorParameters<typeof LspHost>[0] = {}): LspHost {
  const made = new LspHost({ languages: [fakeLanguage(...flags)], ...config });
  hosts.push(made);
  return made;
}

beforeAll(async () => {
  dir = await tempDir("lsp-fake");
  script = await fakeLspScript(dir);
  root = `${dir}/ws`;
  await writeTree(root, { "a.fake": "fine\nERROR(old)\n", "b.fake": "WARN(x)\n", "fake.json": "{}" });
});

afterAll(async () => {
  await Promise.all(hosts.map((h) => h.shutdown()));
  await cleanup(dir);
});

describe("fake server", () => {
  it("lints with introduced vs baseline, keeping the user's folder untouched", async () => {
    const before = await fingerprint(root);
    const h = host([]);
    const branch = new MemoryBranch("b1", root);
    const asIs = await h.lint(branch, "a.fake");
    expect(asIs.diagnostics.map((d) => d.message)).toEqual(["bad old"]);
    expect(asIs.introduced).toEqual([]);
    expect(asIs.partial).toBe(false);

    const edited = await h.lint(branch, "a.fake", { content: "new line\nfine\nERROR(old)\nERROR(fresh)\n" });
    expect(edited.diagnostics.map((d) => [d.line, d.message])).toEqual([
      [3, "bad old"],
      [4, "bad fresh"],
    ]);
    expect(edited.introduced.map((d) => d.message)).toEqual(["bad fresh"]);
    expect(edited.introduced[0]).toMatchObject({
      path: "a.fake",
      line: 4,
      column: 1,
      severity: "error",
      code: "E1",
    });
    expect(await fingerprint(root)).toBe(before);
  });

  it("turns a server crash into an error and restarts on the next use", async () => {
    const h = host(["--crash-on=textDocument/hover"]);
    const branch = new MemoryBranch("b1", root);
    await h.lint(branch, "a.fake");
    const firstPid = h.status()[0]?.pid;
    expect(isRunning(firstPid)).toBe(true);
    const error = await h.hover(branch, "a.fake", { line: 1, column: 1 }).catch((e: unknown) => e);
    expect(isLspError(error, "crashed")).toBe(true);
    expect((error as LspError).message).toContain("exit status 3");
    expect((error as LspError).stderrTail).toContain("crashing on textDocument/hover");
    const again = await h.lint(branch, "a.fake", { content: "ERROR(x)\n" });
    expect(again.introduced.map((d) => d.message)).toEqual(["bad x"]);
    const status = h.status()[0];
    expect(status?.crashes).toBe(1);
    expect(status?.starts).toBe(2);
    expect(status?.pid).not.toBe(firstPid);
  });

  it("times out a request that gets no answer and keeps serving", async () => {
    const h = host(["--hang-on=textDocument/hover"], { config: { requestTimeoutMs: 3000 } });
    const branch = new MemoryBranch("b1", root);
    const error = await h.hover(branch, "a.fake", { line: 1, column: 1 }).catch((e: unknown) => e);
    expect(isLspError(error, "timeout")).toBe(true);
    const result = await h.lint(branch, "a.fake");
    expect(result.diagnostics).toHaveLength(1);
  });

  it("does not hold a starting server to the request timeout", async () => {
    // A server that takes longer to start than a request may take (a busy machine, a big bundle).
    const h = host(["--init-delay=600"], { config: { requestTimeoutMs: 100 } });
    const result = await h.lint(new MemoryBranch("b1", root), "a.fake");
    expect(result.diagnostics.map((d) => d.message)).toEqual(["bad old"]);
    expect(h.status()[0]).toMatchObject({ starts: 1, crashes: 0 });
  });

  it("restarts a server that stopped answering", async () => {
    const h = host(["--hang-on=textDocument/hover"], { config: { requestTimeoutMs: 3000 } });
    const branch = new MemoryBranch("b1", root);
    await h.lint(branch, "a.fake");
    const pid = h.status()[0]?.pid;
    for (let i = 0; i < 3; i++) {
      const error = await h.hover(branch, "a.fake", { line: 1, column: 1 }).catch((e: unknown) => e);
      expect(isLspError(error, "timeout")).toBe(true);
    }
    await waitUntil(() => !isRunning(pid), "the unresponsive server to be killed");
    expect(h.status()[0]).toMatchObject({ unresponsiveRestarts: 1, crashes: 0 });
    expect((await h.lint(branch, "a.fake")).diagnostics).toHaveLength(1);
    expect(h.status()[0]?.starts).toBe(2);
  });

  it("does not restart a slow server that keeps talking (a loaded machine)", async () => {
    const h = host(["--hang-on=textDocument/hover"], { config: { requestTimeoutMs: 3000 } });
    const branch = new MemoryBranch("b1", root);
    await h.lint(branch, "a.fake");
    const pid = h.status()[0]?.pid;
    for (let i = 0; i < 4; i++) {
      // Each hover sends new content, which the server answers with diagnostics before the hover hangs.
      const content = `ERROR(slow${i})\n`;
      const error = await h
        .hover(branch, "a.fake", { line: 1, column: 1 }, { content })
        .catch((e: unknown) => e);
      expect(isLspError(error, "timeout")).toBe(true);
    }
    expect(h.status()[0]).toMatchObject({ pid, unresponsiveRestarts: 0, starts: 1 });
  });

  it("kills an idle server and starts it again when needed", async () => {
    const h = host([], { config: { idleMinutes: 0.3 / 60 } });
    const branch = new MemoryBranch("b1", root);
    await h.lint(branch, "b.fake");
    const pid = h.status()[0]?.pid;
    expect(isRunning(pid)).toBe(true);
    await waitUntil(() => !isRunning(pid), "the idle server to stop");
    expect(h.status()[0]).toMatchObject({ state: "stopped", idleShutdowns: 1 });
    const again = await h.lint(branch, "b.fake");
    expect(again.diagnostics.map((d) => d.severity)).toEqual(["warning"]);
    expect(h.status()[0]?.starts).toBe(2);
  });

  it("marks a result partial when diagnostics do not settle in time", async () => {
    const h = host(["--no-diagnostics"], { config: { lintTimeoutMs: 400 } });
    const result = await h.lint(new MemoryBranch("b1", root), "a.fake", { content: "ERROR(x)\n" });
    expect(result.partial).toBe(true);
    expect(result.partialReasons).toEqual(["diagnostics did not settle within 400 ms"]);

    const slow = host(["--diag-delay=1500"], { config: { lintTimeoutMs: 400 } });
    const late = await slow.lint(new MemoryBranch("b1", root), "a.fake", { content: "ERROR(y)\n" });
    expect(late.partial).toBe(true);
  });

  it("waits for slow diagnostics of exactly the version sent", async () => {
    const h = host(["--diag-delay=150"]);
    const branch = new MemoryBranch("b1", root);
    const results = await Promise.all(
      ["ERROR(one)", "ERROR(two)", "ERROR(three)"].map((content) => h.lint(branch, "a.fake", { content })),
    );
    expect(results.map((r) => r.introduced.map((d) => d.message))).toEqual([
      ["bad one"],
      ["bad two"],
      ["bad three"],
    ]);
  });

  it("uses pull diagnostics when the server offers them", async () => {
    const h = host(["--pull"]);
    const result = await h.lint(new MemoryBranch("b1", root), "a.fake", {
      content: "ERROR(pulled)\nERROR(old)\n",
    });
    expect(result.introduced.map((d) => d.message)).toEqual(["bad pulled"]);
  });

  it("reports a language whose server is not installed", async () => {
    const h = new LspHost({
      languages: [
        {
          ...fakeLanguage(),
          resolveServer: () => {
            throw new LspError("not-installed", "no Fake language server: fakels is not on PATH");
          },
        },
      ],
    });
    hosts.push(h);
    const error = await h.lint(new MemoryBranch("b1", root), "a.fake").catch((e: unknown) => e);
    expect(isLspError(error, "not-installed")).toBe(true);
    const missing = new LspHost({
      languages: [
        {
          ...fakeLanguage(),
          resolveServer: () => ({ command: `${dir}/no-such-server`, args: [], description: "missing" }),
        },
      ],
    });
    hosts.push(missing);
    const spawnError = await missing.lint(new MemoryBranch("b1", root), "a.fake").catch((e: unknown) => e);
    expect(isLspError(spawnError, "not-installed")).toBe(true);
    const unknown = await h.lint(new MemoryBranch("b1", root), "a.txt").catch((e: unknown) => e);
    expect(isLspError(unknown, "unsupported")).toBe(true);
  });

  it("fails queued requests after shutdown and leaves no process behind", async () => {
    const h = host([]);
    const branch = new MemoryBranch("b1", root);
    await h.lint(branch, "a.fake");
    const pid = h.status()[0]?.pid;
    await h.shutdown();
    expect(isRunning(pid)).toBe(false);
    const error = await h.lint(branch, "a.fake").catch((e: unknown) => e);
    expect(isLspError(error, "shut-down")).toBe(true);
  });
});
