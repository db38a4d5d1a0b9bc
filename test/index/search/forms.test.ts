import { describe, expect, it } from "vitest";
import { memberAccesses, phraseForms, stem, wordForms } from "../../../src/index/search/forms.js";
import { isStopWord } from "../../../src/index/search/query.js";

describe("wordForms", () => {
  it("makes the forms of a word from its stem, not the word itself", () => {
    expect(wordForms("suggested")).toEqual(expect.arrayContaining(["suggest", "suggests", "suggestions"]));
    expect(wordForms("generated")).toEqual(expect.arrayContaining(["generate", "generating", "generation"]));
    expect(wordForms("verified")).toEqual(expect.arrayContaining(["verify", "verifies", "verification"]));
    expect(wordForms("cookies")).toContain("cookie");
    expect(wordForms("suggested")).not.toContain("suggested");
  });

  it("leaves short words, code and stems too short to tell apart alone", () => {
    expect(wordForms("use")).toEqual([]);
    expect(wordForms("add_url_rule")).toEqual([]);
    expect(stem("used")).toBe("used");
    expect(stem("headers")).toBe("header");
  });
});

describe("phraseForms", () => {
  it("writes 3–4 consecutive words as their initials and two as one word", () => {
    const forms = phraseForms("how is a JSON web token verified?", isStopWord);
    expect(forms).toEqual(expect.arrayContaining(["jwt", "jsonweb", "webtoken", "jwtv"]));
    expect(phraseForms("stream server-sent events from a handler", isStopWord)).toContain("sse");
    expect(phraseForms("the default request handler", isStopWord)).toContain("requesthandler");
  });

  it("never joins words across a stop word, punctuation or a line", () => {
    const forms = phraseForms("session cookie, signed\nresponse body and headers", isStopWord);
    expect(forms).not.toContain("cookiesigned");
    expect(forms).not.toContain("signedresponse");
    expect(forms).not.toContain("bodyheaders");
    expect(forms).toContain("sessioncookie");
  });
});

describe("memberAccesses", () => {
  it("reads obj.member as code names it, with what was written", () => {
    expect(memberAccesses("what does c.json do, and app.route?")).toEqual([
      { written: "c.json", member: "json" },
      { written: "app.route", member: "route" },
    ]);
  });

  it("leaves abbreviations, versions and dotted module paths", () => {
    expect(memberAccesses("e.g. in v1.2, see pkg.sub.module and i.e. this")).toEqual([]);
  });

  it("reads names with $ whole, and a long run of them at once", () => {
    expect(memberAccesses("call $scope.apply or $.ajax, then foo$bar.baz and _private.x_y")).toEqual([
      { written: "$scope.apply", member: "apply" },
      { written: "$.ajax", member: "ajax" },
      { written: "foo$bar.baz", member: "baz" },
      { written: "_private.x_y", member: "x_y" },
    ]);
    // A name was tried again after every `$` in it, each time to its end: seconds for a query of the
    // engine's largest size (100,000 characters).
    expect(memberAccesses("$".repeat(100_000))).toEqual([]);
    expect(memberAccesses(`${"a$".repeat(50_000)}.b`)).toEqual([]);
  }, 10_000);
});
