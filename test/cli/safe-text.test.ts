import { describe, expect, it } from "vitest";
import { safeOutput } from "../../src/cli/safe-text.js";
import { shownPath } from "../../src/workspace/errors.js";

describe("text for the terminal", () => {
  it("shows every control character of a name as a visible escape", () => {
    expect(shownPath("a\nb")).toBe("a\\nb");
    expect(shownPath("evil\u001b]0;pwned\u0007.ts")).toBe("evil\\x1b]0;pwned\\x07.ts");
    expect(shownPath("x\u009b2J")).toBe("x\\x9b2J");
    expect(shownPath("abc\u202edcba.ts")).toBe("abc\\u202edcba.ts");
    expect(shownPath("plain/ünïcode name.py")).toBe("plain/ünïcode name.py");
  });

  it("keeps newlines, tabs, carriage returns and colours of output, and drops other sequences", () => {
    expect(safeOutput("\u001b[31mred\u001b[0m\tok\n")).toBe("\u001b[31mred\u001b[0m\tok\n");
    // window title, clipboard write (OSC 52), cursor moves, screen clear, device queries
    expect(safeOutput("a\u001b]0;title\u0007b")).toBe("ab");
    expect(safeOutput("a\u001b]52;c;ZXZpbA==\u001b\\b")).toBe("ab");
    expect(safeOutput("a\u001b[2J\u001b[Hb\u001b[6nc")).toBe("abc");
    expect(safeOutput("a\u009b2Jb")).toBe("ab");
    expect(safeOutput("50%\r100%\u0008\u0007")).toBe("50%\r100%");
    expect(safeOutput("line\r\nnext")).toBe("line\r\nnext");
    expect(safeOutput("a\u001bPdevice\u001b\\b")).toBe("ab");
  });
});
