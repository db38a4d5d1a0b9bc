import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../src/sandbox/policy.js";
import { regexEscape, sbplString, seatbeltProfile } from "../../src/sandbox/seatbelt.js";
import type { SandboxPolicy } from "../../src/sandbox/types.js";

const WS = "/Users/dev/project";

function policy(overrides: Partial<SandboxPolicy> = {}): SandboxPolicy {
  return {
    mode: "workspace-write",
    workspace: WS,
    writableRoots: [WS, "/Users/dev/.npm"],
    hiddenPaths: [`${WS}/secrets`],
    protectedPaths: [`${WS}/.git/config`, `${WS}/.git/hooks`, `${WS}/.vscode`, `${WS}/.umbra/config.json`],
    network: false,
    envAllowlist: ["PATH"],
    limits: { ...DEFAULT_LIMITS },
    ...overrides,
  };
}

/** Checks that parentheses balance outside string literals (a cheap well-formedness test of SBPL). */
function balanced(profile: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < profile.length; i++) {
    const char = profile[i];
    if (inString) {
      if (char === "\\") i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === ";") while (i < profile.length && profile[i] !== "\n") i++;
    else if (char === "(") depth++;
    else if (char === ")" && --depth < 0) return false;
  }
  return depth === 0 && !inString;
}

/** The rule block that starts with `head` (up to its closing line). */
function block(profile: string, head: string): string {
  const start = profile.indexOf(head);
  if (start < 0) return "";
  const line = profile.slice(start, profile.indexOf("\n", start));
  if (line.endsWith(")")) return line;
  return profile.slice(start, profile.indexOf("\n)", start) + 2);
}

describe("SBPL strings", () => {
  it("escapes quotes, backslashes and control characters, keeps unicode", () => {
    expect(sbplString("/plain/path")).toBe('"/plain/path"');
    expect(sbplString('/a"b')).toBe('"/a\\"b"');
    expect(sbplString("/a\\b")).toBe('"/a\\\\b"');
    expect(sbplString("/a\nb\tc\rd")).toBe('"/a\\nb\\tc\\rd"');
    expect(sbplString("/a\u0001b\u007f")).toBe('"/a\\x01b\\x7f"');
    expect(sbplString("/Users/zoë/項目 🚀")).toBe('"/Users/zoë/項目 🚀"');
  });

  it("escapes regex metacharacters", () => {
    expect(regexEscape("/a.b/c+d/(x)[y]{z}^$|?*\\")).toBe(
      "/a\\.b/c\\+d/\\(x\\)\\[y\\]\\{z\\}\\^\\$\\|\\?\\*\\\\",
    );
  });

  it("a hostile path cannot break out of its string", () => {
    const evil = '/Users/dev/we"ird\\ (allow default)\n(allow network*)';
    const profile = seatbeltProfile(
      policy({
        workspace: evil,
        writableRoots: [evil],
        hiddenPaths: [],
        protectedPaths: [`${evil}/.git/hooks`],
      }),
    );
    expect(balanced(profile)).toBe(true);
    const lines = profile.split("\n").map((line) => line.trim());
    expect(lines).not.toContain("(allow default)");
    expect(lines).not.toContain("(allow network*)");
    expect(profile).toContain('(subpath "/Users/dev/we\\"ird\\\\ (allow default)\\n(allow network*)")');
    // in the regex the path is regex-escaped first, then string-escaped
    expect(profile).toContain(
      '(regex "^/Users/dev/we\\"ird\\\\\\\\ \\\\(allow default\\\\)\\n\\\\(allow network\\\\*\\\\)/',
    );
  });
});

describe("the profile", () => {
  it("denies by default, allows processes and reads everywhere, writes to the roots and temp folders", () => {
    const profile = seatbeltProfile(policy(), { tmpDir: "/private/var/folders/ab/cd/T" });
    expect(balanced(profile)).toBe(true);
    expect(profile.startsWith("(version 1)\n")).toBe(true);
    expect(profile).toContain("\n(deny default)\n");
    expect(profile).toContain("(allow process-exec)");
    expect(profile).toContain("(allow process-fork)");
    expect(profile).toContain("\n(allow file-read*)\n");
    const writes = block(profile, "(allow file-write*\n");
    expect(writes).toContain(`(subpath "${WS}")`);
    expect(writes).toContain('(subpath "/Users/dev/.npm")');
    expect(writes).toContain('(subpath "/private/tmp")');
    expect(writes).toContain('(subpath "/private/var/folders/ab/cd/T")');
    expect(writes).toContain('(literal "/dev/null")');
  });

  it("keeps protected paths read-only after the writable roots are allowed", () => {
    const profile = seatbeltProfile(policy());
    const allowAt = profile.indexOf("(allow file-write*\n");
    const denyAt = profile.indexOf("(deny file-write*\n");
    expect(allowAt).toBeGreaterThan(0);
    expect(denyAt).toBeGreaterThan(allowAt);
    const denied = block(profile, "(deny file-write*\n");
    expect(denied).toContain(`(literal "${WS}/.git/hooks")`);
    expect(denied).toContain(`(subpath "${WS}/.git/hooks")`);
    expect(denied).toContain(`(literal "${WS}/.git/config")`);
    expect(denied).toContain(`(subpath "${WS}/.vscode")`);
    expect(denied).toContain(`(regex "^${WS}/[^/]*\\\\.code-workspace$")`);
    expect(denied).toContain(`(regex "^${WS}/(.*/)?\\\\.(gitignore|umbraignore|cursorignore)$")`);
    expect(denied).toContain(`(subpath "${WS}/.umbra")`);
    // the folders leading to protected paths cannot be renamed away
    expect(denied).toContain(`(literal "${WS}/.git")`);
    expect(denied).toContain(`(literal "${WS}/.umbra")`);
    // agent-writable .umbra folders are allowed again, after the deny
    const reallow = block(profile.slice(denyAt + 1), "(allow file-write*");
    expect(reallow).toContain(`(subpath "${WS}/.umbra/rules")`);
    expect(reallow).not.toContain(`(subpath "${WS}/.umbra")`);
  });

  it("hides hidden paths from reads and writes, last", () => {
    const profile = seatbeltProfile(policy({ hiddenPaths: [`${WS}/secrets`, `${WS}/config/prod.env`] }));
    const hidden = block(profile, "(deny file-read* file-write*\n");
    expect(hidden).toContain(`(subpath "${WS}/secrets")`);
    expect(hidden).toContain(`(literal "${WS}/config/prod.env")`);
    expect(profile.indexOf("(deny file-read* file-write*")).toBeGreaterThan(
      profile.indexOf("(allow file-read*)"),
    );
    expect(profile.indexOf("(deny file-read* file-write*")).toBeGreaterThan(
      profile.indexOf(`(subpath "${WS}/.umbra/rules")`),
    );
    expect(profile).toContain(`(deny file-write* (literal "${WS}/config"))`);
  });

  it("denies the network unless the policy allows it", () => {
    const off = seatbeltProfile(policy());
    expect(off).toContain("(deny network*)");
    expect(off).not.toContain("(allow network*)");
    // no localhost exception: under Seatbelt localhost is the host's own (Linux gives a private one)
    expect(off).not.toMatch(/\(allow network[^\n]*(localhost|127\.0\.0\.1)/);
    const on = seatbeltProfile(policy({ network: true }));
    expect(on).toContain("(allow network*)");
    expect(on).not.toContain("(deny network*)");
  });

  it("read-only mode writes nowhere but the temp folders and devices", () => {
    const profile = seatbeltProfile(policy({ mode: "read-only", writableRoots: [] }));
    const writes = block(profile, "(allow file-write*\n");
    expect(writes).not.toContain(`(subpath "${WS}")`);
    expect(writes).toContain('(subpath "/private/tmp")');
    expect(profile).not.toContain(`(subpath "${WS}/.umbra/rules")`);
    expect(profile).toContain(`(subpath "${WS}/.git/hooks")`);
  });

  it("full-access allows everything but what the policy still hides or protects", () => {
    const profile = seatbeltProfile(
      policy({
        mode: "full-access",
        writableRoots: ["/"],
        hiddenPaths: [],
        protectedPaths: [],
        network: true,
      }),
    );
    expect(profile).toContain("(allow default)");
    expect(profile).not.toContain("(deny default)");
    expect(profile).not.toContain("(deny file-write*");
    const adminNoNet = seatbeltProfile(
      policy({
        mode: "full-access",
        writableRoots: ["/"],
        hiddenPaths: [],
        protectedPaths: ["/etc/x"],
        network: false,
      }),
    );
    expect(adminNoNet).toContain("(deny network*)");
    expect(adminNoNet).toContain('(deny file-write*\n  (literal "/etc/x")');
  });
});
