import { describe, expect, it } from "vitest";
import { newToken, refusal } from "../../src/mcp/guard.js";

const token = newToken();
const ok = { host: "127.0.0.1:4100", authorization: `Bearer ${token}` };

describe("the HTTP guard of umbra mcp", () => {
  it("lets a loopback request with this start's token pass", () => {
    expect(refusal(ok, 4100, token)).toBeUndefined();
    expect(refusal({ ...ok, host: "localhost:4100" }, 4100, token)).toBeUndefined();
    expect(refusal({ ...ok, origin: "http://localhost:6274" }, 4100, token)).toBeUndefined();
    expect(refusal({ ...ok, origin: "https://127.0.0.1" }, 4100, token)).toBeUndefined();
  });

  it("wants the token", () => {
    expect(refusal({ host: ok.host }, 4100, token)?.status).toBe(401);
    expect(refusal({ ...ok, authorization: "Bearer nope" }, 4100, token)?.status).toBe(401);
    expect(refusal({ ...ok, authorization: token }, 4100, token)?.status).toBe(401);
    expect(refusal({ ...ok, authorization: `Basic ${token}` }, 4100, token)?.status).toBe(401);
    expect(newToken()).not.toBe(token);
    expect(token.length).toBeGreaterThanOrEqual(43);
  });

  it("refuses other Hosts (DNS rebinding) and pages of other sites, even with the token", () => {
    for (const host of ["evil.example:4100", "127.0.0.1:4101", "127.0.0.1", "0.0.0.0:4100", "[::1]:4100", ""])
      expect(refusal({ ...ok, host }, 4100, token)?.status).toBe(403);
    expect(refusal({ ...ok, host: undefined }, 4100, token)?.status).toBe(403);
    for (const origin of [
      "http://evil.example",
      "http://localhost.evil.example",
      "null",
      "file://",
      "chrome-extension://x",
    ])
      expect(refusal({ ...ok, origin }, 4100, token)?.status).toBe(403);
  });
});
