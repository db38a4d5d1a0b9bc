/**
 * mergeChange: the three-way merge of one file (the agent's recorded base, the agent's content, the
 * user's current content). In every case the user's own bytes survive, or the file is a conflict.
 */
import { describe, expect, it } from "vitest";
import { AcceptError, mergeChange } from "../../src/accept/index.js";
import { ABSENT, change, file, link, numbered, replaceLine, text } from "./helpers.js";

const BASE = numbered(20);
const AGENT = replaceLine(BASE, 2, "two-by-agent");
const USER = replaceLine(BASE, 19, "nineteen-by-user");

describe("mergeChange on text", () => {
  it("keeps the user's edit of other lines next to the agent's (issue 13's scenario)", async () => {
    const outcome = await mergeChange(change("f.txt", file(BASE), file(AGENT)), file(USER));
    expect(outcome.kind).toBe("clean");
    if (outcome.kind !== "clean") return;
    expect(await text(outcome.result)).toBe(replaceLine(AGENT, 19, "nineteen-by-user"));
  });

  it("takes the agent's file when the user did not touch it, and nothing when the user has it", async () => {
    const taken = await mergeChange(change("f.txt", file(BASE), file(AGENT)), file(BASE));
    expect(taken.kind === "clean" && (await text(taken.result))).toBe(AGENT);
    expect(await mergeChange(change("f.txt", file(BASE), file(AGENT)), file(AGENT))).toEqual({
      kind: "unchanged",
    });
  });

  it("reports the same lines changed by both as a conflict with the region in the user's file", async () => {
    const user = replaceLine(BASE, 2, "two-by-user");
    const outcome = await mergeChange(change("f.txt", file(BASE), file(AGENT)), file(user));
    expect(outcome.kind).toBe("conflict");
    if (outcome.kind !== "conflict") return;
    expect(outcome.why).toContain("1 conflicting hunk");
    expect(outcome.hunks).toEqual([{ line: 2, lines: 1, yours: "two-by-user", agent: "two-by-agent" }]);
  });

  it("places a conflict after the agent's clean changes above it by the user's line numbers", async () => {
    // the agent inserts two lines at the top (clean) and changes line 15, which the user changed too
    const agent = `a\nb\n${replaceLine(BASE, 15, "fifteen-agent")}`;
    const user = replaceLine(replaceLine(BASE, 15, "fifteen-user"), 16, "sixteen-user");
    const outcome = await mergeChange(change("f.txt", file(BASE), file(agent)), file(user));
    expect(outcome.kind === "conflict" && outcome.hunks).toEqual([
      { line: 15, lines: 2, yours: "fifteen-user\nsixteen-user", agent: "fifteen-agent\n16" },
    ]);
  });

  it("settles a conflict with ours, theirs or markers; the clean hunks of both still merge", async () => {
    const agent = replaceLine(AGENT, 10, "ten-by-agent");
    const user = replaceLine(replaceLine(BASE, 2, "two-by-user"), 19, "nineteen-by-user");
    const c = change("f.txt", file(BASE), file(agent));
    const ours = await mergeChange(c, file(user), { resolve: "ours" });
    expect(ours.kind === "clean" && (await text(ours.result))).toBe(replaceLine(user, 10, "ten-by-agent"));
    const theirs = await mergeChange(c, file(user), { resolve: "theirs" });
    expect(theirs.kind === "clean" && (await text(theirs.result))).toBe(
      replaceLine(agent, 19, "nineteen-by-user"),
    );
    const markers = await mergeChange(c, file(user), { resolve: "markers" });
    const marked = markers.kind === "clean" ? await text(markers.result) : "";
    expect(marked).toContain(
      "<<<<<<< yours\ntwo-by-user\n||||||| base\n2\n=======\ntwo-by-agent\n>>>>>>> agent\n",
    );
    expect(marked).toContain("ten-by-agent\n");
    expect(marked).toContain("nineteen-by-user\n");
  });

  it("accepts only the chosen hunk of the agent's change", async () => {
    const agent = replaceLine(AGENT, 18, "eighteen-by-agent"); // hunks: #1 around line 2, #2 around line 18
    const c = change("f.txt", file(BASE), file(agent));
    const user = replaceLine(BASE, 10, "ten-by-user");
    const second = await mergeChange(c, file(user), { hunks: [2] });
    expect(second.kind === "clean" && (await text(second.result))).toBe(
      replaceLine(user, 18, "eighteen-by-agent"),
    );
    const none = await mergeChange(c, file(BASE), { hunks: [] });
    expect(none).toEqual({ kind: "unchanged" });
    await expect(mergeChange(c, file(USER), { hunks: [3] })).rejects.toThrow(AcceptError);
  });

  it("numbers hunks as the diff shows the file: one the diff shows as binary (not UTF-8) is one hunk", async () => {
    // latin1 text: the diff says "Binary files differ", so the user cannot see hunks 1 and 2 of it
    const latin1 = (s: string) => Buffer.from(s, "latin1");
    const agent = replaceLine(AGENT, 18, "eighteen-by-agent-\u00e9");
    const c = change("f.txt", file(latin1(`${BASE}\u00e9\n`)), file(latin1(`${agent}\u00e9\n`)));
    await expect(mergeChange(c, file(latin1(`${BASE}\u00e9\n`)), { hunks: [2] })).rejects.toThrow(
      /1 hunk \(the whole change\)/,
    );
    const whole = await mergeChange(c, file(latin1(`${BASE}\u00e9\n`)), { hunks: [1] });
    expect(whole.kind === "clean" && (await text(whole.result))).toBe(latin1(`${agent}\u00e9\n`).toString());
  });

  it("keeps the user's mode, and takes the agent's change of the mode", async () => {
    const user = await mergeChange(change("s", file(BASE), file(AGENT)), file(USER, "100755"));
    expect(user.kind === "clean" && user.result.kind === "file" && user.result.mode).toBe("100755");
    const agentMode = await mergeChange(change("s", file(BASE, "100755"), file(BASE)), file(USER, "100755"));
    expect(agentMode.kind === "clean" && agentMode.result.kind === "file" && agentMode.result.mode).toBe(
      "100644",
    );
    const modeOnly = await mergeChange(change("s", file(BASE), file(BASE, "100755")), file(BASE));
    expect(modeOnly.kind === "clean" && modeOnly.result.kind === "file" && modeOnly.result.mode).toBe(
      "100755",
    );
  });
});

describe("mergeChange on whole files", () => {
  const both = async (c: ReturnType<typeof change>, user: Parameters<typeof mergeChange>[1]) => ({
    plain: await mergeChange(c, user),
    ours: await mergeChange(c, user, { resolve: "ours" }),
    theirs: await mergeChange(c, user, { resolve: "theirs" }),
  });

  it("a file the user deleted or renamed away while the agent changed it is a conflict", async () => {
    const c = change("f.txt", file(BASE), file(AGENT));
    const result = await both(c, ABSENT);
    expect(result.plain).toMatchObject({
      kind: "conflict",
      why: expect.stringContaining("you deleted or renamed"),
    });
    expect(result.ours).toEqual({ kind: "unchanged" });
    expect(result.theirs).toEqual({ kind: "clean", result: c.branch });
  });

  it("a file the agent deleted and the user changed is a conflict; unchanged by the user it is deleted", async () => {
    const c = change("f.txt", file(BASE), ABSENT);
    expect(await mergeChange(c, file(USER))).toMatchObject({
      kind: "conflict",
      why: expect.stringContaining("deleted"),
    });
    expect(await mergeChange(c, file(BASE))).toEqual({ kind: "clean", result: ABSENT });
  });

  it("both created the path: same content is nothing to do, different content a conflict", async () => {
    const c = change("new.txt", ABSENT, file("agent\n"));
    expect(await mergeChange(c, file("agent\n"))).toEqual({ kind: "unchanged" });
    const outcome = await mergeChange(c, file("user\n"));
    expect(outcome).toMatchObject({ kind: "conflict", why: expect.stringContaining("both created") });
    expect(outcome.kind === "conflict" && outcome.hunks[0]).toMatchObject({
      line: 1,
      yours: "user",
      agent: "agent",
    });
  });

  it("an unknown base is a conflict with its reason unless the user has the agent's content", async () => {
    const c = change(
      "f.txt",
      { kind: "unknown", why: "you changed it while a command copied it" },
      file(AGENT),
    );
    expect(await mergeChange(c, file(AGENT))).toEqual({ kind: "unchanged" });
    const result = await both(c, file(USER));
    expect(result.plain).toEqual({
      kind: "conflict",
      why: "you changed it while a command copied it",
      hunks: [],
    });
    expect(result.ours).toEqual({ kind: "unchanged" });
    expect(result.theirs).toEqual({ kind: "clean", result: c.branch });
  });

  it("binary files and links changed differently by both are conflicts, never merged by line", async () => {
    const bin = (s: string) => file(Buffer.from(`\0${s}`));
    const binary = await both(change("b.bin", bin("base"), bin("agent")), bin("user"));
    expect(binary.plain).toMatchObject({ kind: "conflict", why: expect.stringContaining("binary") });
    expect(binary.ours).toEqual({ kind: "unchanged" });
    const links = await both(change("l", link("a"), link("b")), link("c"));
    expect(links.plain).toMatchObject({ kind: "conflict", why: expect.stringContaining("symbolic link") });
    expect(await mergeChange(change("l", link("a"), link("b")), link("a"))).toEqual({
      kind: "clean",
      result: link("b"),
    });
  });

  it("a file over 64 MiB is refused without being loaded", async () => {
    const huge = {
      kind: "file" as const,
      mode: "100644" as const,
      size: 65 * 1024 * 1024,
      load: async () => {
        throw new Error("loaded");
      },
    };
    expect(await mergeChange(change("big", file("x"), huge), file("y"))).toMatchObject({
      kind: "conflict",
      why: expect.stringContaining("64 MiB"),
    });
  });
});
