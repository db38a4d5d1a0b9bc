import { describe, expect, it, vi } from "vitest";
import { LspError } from "../../src/lsp/errors.js";
import { DiagnosticsInbox, type Settled, settlePush } from "../../src/lsp/settle.js";

const never = new Promise<LspError>(() => undefined);
const diag = (message: string) => ({
  range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } },
  message,
});

describe("settlePush", () => {
  it("ignores publishes for other versions and waits for the quiet period", async () => {
    // Fake timers: the quiet period is checked to the millisecond, whatever the machine's load.
    vi.useFakeTimers();
    try {
      const inbox = new DiagnosticsInbox();
      const uri = "file:///w/a.py";
      let settled: Settled | undefined;
      void settlePush(inbox, [{ uri, version: 5 }], {
        quietMs: 60,
        deadline: Date.now() + 2000,
        since: inbox.position,
        exited: never,
      }).then((result) => {
        settled = result;
      });
      inbox.publish({ uri, version: 4, diagnostics: [diag("stale")] });
      await vi.advanceTimersByTimeAsync(20);
      inbox.publish({ uri, version: 5, diagnostics: [diag("first")] });
      await vi.advanceTimersByTimeAsync(30);
      expect(settled).toBeUndefined();
      inbox.publish({ uri, version: 5, diagnostics: [diag("second")] });
      await vi.advanceTimersByTimeAsync(59);
      expect(settled).toBeUndefined(); // 60 ms of quiet after the last publish, not after the first
      await vi.advanceTimersByTimeAsync(1);
      expect(settled?.partial).toBe(false);
      expect(settled?.diagnostics.get(uri)?.map((d) => d.message)).toEqual(["second"]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("returns a partial result at the deadline", async () => {
    const inbox = new DiagnosticsInbox();
    inbox.publish({ uri: "file:///w/a.py", version: 1, diagnostics: [diag("old")] });
    const settled = await settlePush(
      inbox,
      [
        { uri: "file:///w/a.py", version: 1 },
        { uri: "file:///w/b.py", version: 2 },
      ],
      { quietMs: 10, deadline: Date.now() + 80, since: inbox.position, exited: never },
    );
    expect(settled.partial).toBe(true);
    expect(settled.diagnostics.get("file:///w/a.py")).toHaveLength(1);
    expect(settled.diagnostics.get("file:///w/b.py")).toEqual([]);
  });

  it("rejects when the server exits while waiting", async () => {
    const inbox = new DiagnosticsInbox();
    const exited = Promise.resolve(new LspError("crashed", "server crashed"));
    const error = await settlePush(inbox, [{ uri: "file:///w/a.py", version: 1 }], {
      quietMs: 10,
      deadline: Date.now() + 5000,
      since: 0,
      exited,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LspError);
    expect((error as LspError).code).toBe("crashed");
  });

  it("matches unversioned publishes by arrival", async () => {
    const inbox = new DiagnosticsInbox();
    const uri = "file:///w/c.c";
    inbox.publish({ uri, diagnostics: [diag("before")] });
    const since = inbox.position;
    const result = settlePush(inbox, [{ uri, version: 3 }], {
      quietMs: 10,
      deadline: Date.now() + 1000,
      since,
      exited: never,
    });
    inbox.publish({ uri, diagnostics: [diag("after")] });
    expect((await result).diagnostics.get(uri)?.[0]?.message).toBe("after");
  });
});
