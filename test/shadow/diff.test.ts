import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runSession } from "../../src/agent/run.js";
import { gitBlobId, quotePath } from "../../src/shadow/diff.js";
import { run } from "../../src/shadow/index.js";
import { scriptedModel, testConfig } from "../agent/helpers.js";
import { cleanup, copyExamples } from "../helpers/workspace.js";
import { type Fixture, setup } from "./helpers.js";

let fixture: Fixture | undefined;

afterEach(async () => {
  await fixture?.done();
  fixture = undefined;
});

function prepare(root: string): void {
  writeFileSync(join(root, "crlf.txt"), "one\r\ntwo\r\n");
  writeFileSync(join(root, "no-newline.txt"), "last line");
  writeFileSync(join(root, "empty.txt"), "");
  writeFileSync(join(root, "with space.txt"), "a\nb\n");
}

describe("diff", () => {
  it("is applied by git exactly, for edge cases of names and content", async () => {
    const f = await setup(prepare);
    fixture = f;
    const branch = await f.fork();
    await run(branch, "sh", [
      "-c",
      [
        "printf 'one\\r\\nTWO\\r\\n' > crlf.txt",
        "printf 'last line changed' > no-newline.txt",
        "rm empty.txt",
        "printf 'a\\nB\\n' > 'with space.txt'",
        "printf 'q\\n' > 'quote\"d.txt'",
        "touch new-empty.txt",
        "printf 'x\\n' > \"$(printf 'tab\\there.txt')\"",
        "printf 'y\\n' > 'back\\slash.txt'",
        "printf 'caf\\303\\251\\n' > 'unicodé.txt'",
        "printf '\\377\\376 not utf8\\n' > latin1.txt",
      ].join(" && "),
    ]);
    branch.write("docs/operations.md", "replaced by an override\n");
    const patch = await branch.diff({ binary: true });
    expect(patch).toContain('diff --git "a/quote\\"d.txt" "b/quote\\"d.txt"');
    expect(patch).toContain('diff --git "a/tab\\there.txt" "b/tab\\there.txt"');
    expect(patch).toContain('diff --git "a/back\\\\slash.txt" "b/back\\\\slash.txt"');
    expect(patch).toContain("+++ b/with space.txt\t\n");
    expect(patch).toContain("\\ No newline at end of file");
    expect(patch).toContain("diff --git a/new-empty.txt b/new-empty.txt\nnew file mode 100644\ndiff --git");
    expect(patch).toContain("diff --git a/empty.txt b/empty.txt\ndeleted file mode 100644\n");
    const copy = await copyExamples();
    try {
      prepare(copy);
      const file = join(copy, "..", "p.patch");
      writeFileSync(file, patch);
      execFileSync("git", ["apply", "--check", file], { cwd: copy, stdio: "pipe" });
      execFileSync("git", ["apply", file], { cwd: copy, stdio: "pipe" });
      const changes = await branch.changes();
      expect(changes.length).toBe(11);
      for (const change of changes) {
        const path = join(copy, change.path);
        if (change.kind === "deleted") expect(existsSync(path), change.path).toBe(false);
        else expect(readFileSync(path), change.path).toEqual(await branch.read(change.path));
      }
      expect(lstatSync(join(copy, "new-empty.txt")).size).toBe(0);
    } finally {
      await cleanup(join(copy, ".."));
    }
  });

  it("uses git's blob ids and path quoting", () => {
    expect(gitBlobId(Buffer.from("hello\n"))).toBe("ce013625030ba8dba906f756967f9e9ca394464a");
    for (const content of ["", "x", "\u0000binary\u00ff"]) {
      const byGit = execFileSync("git", ["hash-object", "--stdin"], {
        input: content,
        encoding: "utf8",
      }).trim();
      expect(gitBlobId(Buffer.from(content))).toBe(byGit);
    }
    expect(quotePath("plain/path with space.ts")).toBe("plain/path with space.ts");
    expect(quotePath('a"b\\c\nd\x01')).toBe('"a\\"b\\\\c\\nd\\001"');
  });

  it("leaves out the content of a file too large to read, and keeps the rest", async () => {
    const f = await setup((root) => {
      writeFileSync(join(root, "data.csv"), "a,b\n1,2\n");
      writeFileSync(join(root, "old.log"), "x".repeat(100));
    });
    fixture = f;
    const branch = await f.fork();
    // A sparse 2.1 GiB file costs no disk; Node cannot hold it in one buffer.
    await run(branch, "sh", [
      "-c",
      "truncate -s 2200M huge.bin && printf 'a,b\\n1,3\\n' > data.csv && rm old.log",
    ]);
    branch.write("billing/tax.ts", "export const rate = 1;\n");
    const patch = await branch.diff();
    expect(patch).toContain(
      "diff --git a/huge.bin b/huge.bin\nnew file mode 100644\n" +
        "Large file added, content not shown: b/huge.bin 2.1 GiB (2306867200 bytes); over the 64.0 MiB (67108864 bytes) diff limit\n",
    );
    expect(patch).toContain("-1,2\n+1,3\n");
    expect(patch).toContain("+export const rate = 1;");
    expect(patch).toContain("diff --git a/old.log b/old.log\ndeleted file mode 100644\n");

    // Below a chosen limit, modified and deleted files are summarised the same way, with both sizes.
    const small = await branch.diff({ maxFileBytes: 50 });
    expect(small).toContain(
      "diff --git a/old.log b/old.log\ndeleted file mode 100644\n" +
        "Large file deleted, content not shown: a/old.log 100 bytes; over the 50 bytes diff limit\n",
    );
    expect(small).toContain("Large file modified, content not shown: a/billing/tax.ts");
    expect(small).toContain("-1,2\n+1,3\n");
  });

  it("ends an agent session with a diff when the agent made a 2 GiB file", async () => {
    const f = await setup();
    fixture = f;
    const { model } = scriptedModel([
      {
        toolCalls: [
          { name: "run_command", input: { command: "truncate -s 2200M dump.bin" } },
          { name: "edit", input: { path: "billing/tax.ts", search: "  food: 7,", replace: "  food: 5," } },
        ],
      },
      { text: "done" },
    ]);
    const result = await runSession({
      root: f.root,
      task: "food VAT 5%",
      config: testConfig(f.root, f.env),
      env: f.env,
      model,
      lsp: null,
    });
    expect(result.diff).toContain("+  food: 5,");
    expect(result.diff).toContain("Large file added, content not shown: b/dump.bin 2.1 GiB");
    const dump = result.changes.find((change) => change.path === "dump.bin");
    expect(dump?.base).toEqual({ kind: "absent" });
    expect(dump?.branch).toMatchObject({ kind: "file", size: 2200 * 1024 * 1024 });
  });
});
