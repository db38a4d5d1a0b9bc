import { describe, expect, it } from "vitest";
import { codeNames } from "../../../src/index/search/thesaurus.js";

describe("codeNames", () => {
  it("gives a word's abbreviations", () => {
    expect(codeNames("dictionary")).toContain("dict");
    expect(codeNames("configuration")).toEqual(expect.arrayContaining(["config", "cfg"]));
  });

  it("gives the words programmers use in a word's place, both ways round", () => {
    expect(codeNames("remove")).toContain("strip");
    expect(codeNames("strip")).toContain("remove");
    expect(codeNames("find")).toEqual(expect.arrayContaining(["lookup", "search"]));
  });

  it("never gives the word itself, and nothing for a word it does not know", () => {
    for (const word of ["remove", "dictionary", "length", "len"]) expect(codeNames(word)).not.toContain(word);
    expect(codeNames("session")).toEqual([]);
  });

  it("knows no names for the members of Object.prototype (a word of a query is no key of a plain object)", () => {
    for (const word of ["constructor", "__proto__", "toString", "valueOf", "hasOwnProperty", "isPrototypeOf"])
      expect(codeNames(word)).toEqual([]);
  });
});
