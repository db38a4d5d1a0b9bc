import assert from "node:assert/strict";
import { test } from "node:test";
import { slugify } from "../slug.mjs";

test("punctuation runs collapse and ends are trimmed", () => {
  assert.equal(slugify("  Hello, World!!  "), "hello-world");
});

test("accents are removed", () => {
  assert.equal(slugify("Crème brûlée"), "creme-brulee");
});

test("digits are kept", () => {
  assert.equal(slugify("Top 10 tips"), "top-10-tips");
});
