import { describe, expect, it } from "vitest";
import {
  bareShapes,
  framingChunks,
  nameFit,
  nameMatch,
  nameWords,
  sameWord,
} from "../../../src/index/search/names.js";

describe("sameWord", () => {
  it.each([
    ["redirect", "redirects"],
    ["auth", "authorization"],
    ["verified", "verify"],
    ["suggested", "suggestions"],
    ["encoded", "encode"],
    ["session", "session"],
  ])("reads %s and %s as one word", (a, b) => {
    expect(sameWord(a, b)).toBe(true);
    expect(sameWord(b, a)).toBe(true);
  });

  it.each([
    ["len", "length"], // too short to be a prefix
    ["run", "runtime"],
    ["conflicting", "config"], // four letters in common are not a stem
    ["static", "state"],
  ])("keeps %s and %s apart", (a, b) => {
    expect(sameWord(a, b)).toBe(false);
  });
});

describe("nameWords", () => {
  it("splits the innermost name of a symbol path, keeping the whole name", () => {
    expect(nameWords("SecureCookieSessionInterface > get_signing_serializer")).toEqual([
      "get_signing_serializer",
      "get",
      "signing",
      "serializer",
    ]);
    expect(nameWords("Engine > ServeHTTP")).toEqual(["servehttp", "serve", "http"]);
    expect(nameWords("verify")).toEqual(["verify"]);
    expect(nameWords("")).toEqual([]);
  });
});

describe("nameMatch", () => {
  const weights = new Map([
    ["session", 1],
    ["cookie", 1],
    ["signed", 2],
  ]);

  it("is the share of the query's weight the name carries", () => {
    expect(nameMatch(weights, "SessionInterface > open_session")).toBeCloseTo(0.25);
    expect(nameMatch(weights, "signed_cookie")).toBeCloseTo(0.75);
    expect(nameMatch(weights, "sign_session_cookie")).toBeCloseTo(1);
  });

  it("reads only the innermost name, and nothing for a chunk without a symbol", () => {
    expect(nameMatch(weights, "SessionCookie > open")).toBe(0);
    expect(nameMatch(weights, "")).toBe(0);
  });

  it("finds a term in a name that writes another word for it", () => {
    const asked = new Map([
      ["remove", 1],
      ["flags", 1],
    ]);
    // "remove" is read as `strip`, the word code writes for it (thesaurus.ts)
    expect(nameMatch(asked, "stripFlags")).toBeCloseTo(1);
    expect(nameMatch(asked, "stripFlags", () => [])).toBeCloseTo(0.5);
    expect(nameMatch(asked, "parseFlags")).toBeCloseTo(0.5);
  });

  it("weighs each term by how rare it is (nameFit)", () => {
    const score = nameFit(
      new Map([
        ["run", 1],
        ["wsgi", 1],
      ]),
      new Map([
        ["run", 0.5],
        ["wsgi", 4.5],
      ]),
    );
    expect(score("Flask > wsgi_app")).toBeCloseTo(0.9);
    expect(score("Flask > run")).toBeCloseTo(0.1);
    expect(score("Flask > wsgi_app")).toBeCloseTo(0.9); // remembered, the same
  });
});

describe("framingChunks", () => {
  const chunk = (symbol: string, defines: string[] = [], declares: string[] = []) => ({
    symbol,
    defines,
    declares,
  });
  const rows = [
    chunk("Command", [], ["Command"]),
    chunk("Command"),
    chunk("", ["Command > Find", "Command > Traverse"]),
    chunk("SessionInterface", ["SessionInterface"]),
    chunk("SessionInterface", ["SessionInterface > save_session"]),
    chunk("stripFlags", ["stripFlags"]),
    chunk("stripFlags"),
    chunk("Options", [], ["Options"]),
  ];
  const framing = framingChunks(rows);

  it("tells a class's or struct's own chunks, declarations and unnamed chunks from code", () => {
    expect(rows.map(framing)).toEqual([true, true, false, true, false, false, false, true]);
    expect(framing(chunk(""))).toBe(true); // imports, constants
  });

  it("never counts a chunk that defines functions as framing", () => {
    expect(framing(chunk("Command", ["Command", "Command > Name"]))).toBe(false);
    // a function whose name nothing else is a member of is code, whatever its pieces
    expect(framing(chunk("helper", ["helper"]))).toBe(false);
  });
});

describe("bareShapes", () => {
  const chunk = (symbol: string, defines: string[] = [], declares: string[] = []) => ({
    symbol,
    defines,
    declares,
  });

  it("is what a file declares that none of its code belongs to", () => {
    const shapes = bareShapes([
      chunk("Options", [], ["Options", "Hooks"]),
      chunk("Options"), // a later piece of the interface
      chunk("Command", [], ["Command"]), // a Go struct with a method below
      chunk("", ["Command > Find", "helper"]),
      chunk("Config", ["Config"]), // a class: code, not a shape
    ]);
    expect([...shapes].sort()).toEqual(["Hooks", "Options"]);
  });

  it("is empty for a file that declares nothing", () => {
    expect(bareShapes([chunk("run", ["run"]), chunk("")]).size).toBe(0);
  });
});
