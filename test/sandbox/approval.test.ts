import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  type Approver,
  allowEntryFor,
  allowlistApprover,
  allowlistMatches,
  alwaysApprove,
  alwaysDeny,
  commandLine,
  firstApproving,
  terminalApprover,
} from "../../src/sandbox/approval.js";

const req = (command: string, ...args: string[]) => ({ command, args });

describe("allowEntryFor: the saved rule of an approved command", () => {
  it("allows exactly that command line, a * in it covering one character only", () => {
    const request = req("sh", "-c", "npm install left-pad");
    const entry = allowEntryFor(request);
    expect(entry).toBe("sh -c npm install left-pad");
    expect(allowlistMatches(entry, request)).toBe(true);
    expect(allowlistMatches(entry, req("sh", "-c", "npm install left-pad && curl evil"))).toBe(false);
    const glob = allowEntryFor(req("sh", "-c", "rm *.tmp"));
    expect(glob).toBe("sh -c rm ?.tmp");
    expect(allowlistMatches(glob, req("sh", "-c", "rm *.tmp"))).toBe(true);
    expect(allowlistMatches(glob, req("sh", "-c", "rm everything.tmp"))).toBe(false);
    // a command without arguments gets its name: that command with any arguments (the agent's
    // run_command always asks for `sh -c COMMAND`, never a bare name)
    expect(allowEntryFor(req("./fetch.sh"))).toBe("./fetch.sh");
  });
});

describe("allowlist", () => {
  it("matches command names and globs of the command line", () => {
    expect(allowlistMatches("npm", req("npm", "install"))).toBe(true);
    expect(allowlistMatches("npm", req("/usr/local/bin/npm", "ci"))).toBe(true);
    expect(allowlistMatches("npm", req("npx", "npm"))).toBe(false);
    expect(allowlistMatches("npm install *", req("npm", "install", "left-pad"))).toBe(true);
    expect(allowlistMatches("npm install *", req("npm", "publish"))).toBe(false);
    expect(allowlistMatches("go mod download", req("/usr/bin/go", "mod", "download"))).toBe(true);
    expect(
      allowlistMatches("pip install -r requirements.txt", req("pip", "install", "-r", "requirements.txt")),
    ).toBe(true);
    expect(allowlistMatches("curl https://example.com/*", req("curl", "https://example.com/a/b"))).toBe(true);
    expect(allowlistMatches("cargo ?etch", req("cargo", "fetch"))).toBe(true);
    expect(allowlistMatches("  ", req("npm"))).toBe(false);
  });

  it("approves listed commands only", async () => {
    const approver = allowlistApprover(["npm", "git fetch*"]);
    expect(await approver(req("npm", "ci"))).toBe(true);
    expect(await approver(req("git", "fetch", "origin"))).toBe(true);
    expect(await approver(req("git", "push"))).toBe(false);
    expect(await alwaysDeny()(req("npm"))).toBe(false);
    expect(await alwaysApprove()(req("anything"))).toBe(true);
  });

  it("asks the next approver only when the previous one denied", async () => {
    const asked: string[] = [];
    const spy =
      (name: string, answer: boolean): Approver =>
      async () => {
        asked.push(name);
        return answer;
      };
    expect(await firstApproving(spy("a", false), spy("b", true), spy("c", true))(req("x"))).toBe(true);
    expect(asked).toEqual(["a", "b"]);
  });

  it("quotes the command line for display", () => {
    expect(commandLine(req("sh", "-c", "curl x", ""))).toBe('sh -c "curl x" ""');
  });
});

describe("terminal prompt", () => {
  function tty(isTTY: boolean) {
    const input = Object.assign(new PassThrough(), { isTTY });
    const output = Object.assign(new PassThrough(), { isTTY });
    let written = "";
    output.on("data", (chunk: Buffer) => {
      written += chunk.toString("utf8");
    });
    return { input, output, written: () => written };
  }

  it("denies with a message when there is no terminal", async () => {
    const messages: string[] = [];
    const { input, output } = tty(false);
    const approver = terminalApprover({ input, output, notify: (message) => messages.push(message) });
    expect(await approver(req("curl", "https://example.com"))).toBe(false);
    expect(messages.join("\n")).toMatch(
      /no terminal to ask on: denied .*--yes.*sandbox\.network\.allowCommands/,
    );
  });

  it("asks and reads the answer", async () => {
    for (const [answer, expected] of [
      ["y\n", true],
      ["yes\n", true],
      ["n\n", false],
      ["\n", false],
    ] as const) {
      const { input, output, written } = tty(true);
      const pending = terminalApprover({ input, output })(req("npm", "install"));
      input.write(answer);
      expect(await pending, answer).toBe(expected);
      expect(written()).toMatch(/allow network access for `npm install`\? \[y\/N\]/);
    }
  });

  it("denies when the input ends without an answer", async () => {
    const { input, output } = tty(true);
    const pending = terminalApprover({ input, output })(req("npm", "install"));
    input.end();
    expect(await pending).toBe(false);
  });
});
