/**
 * A small jest-compatible test runner for Exercism JavaScript exercises, written into the task's
 * repository (at JEST_SHIM_PATH) so that the tests run offline with plain Node: describe/test/it (and the
 * x- and .skip variants), before/after hooks, expect with the matchers those specs use (toEqual, toBe,
 * toThrow, toBeCloseTo, resolves/rejects, not, …). Specs import their solution without an extension and
 * are ES modules whatever package.json says: a module hook adds ".js" and loads local .js files as ESM.
 */
export const JEST_SHIM_PATH = ".eval/jest.mjs";

export const JEST_SHIM = String.raw`// jest-compatible runner used by umbra eval (offline; no dependencies)
import { createRequire, register } from "node:module";
import { resolve as resolvePath } from "node:path";
import { pathToFileURL } from "node:url";
import { inspect } from "node:util";

const HOOKS = [
  "export async function resolve(specifier, context, next) {",
  "  try { return await next(specifier, context); } catch (error) {",
  "    if (/^[./]/.test(specifier) && !/\\.[cm]?js$/.test(specifier)) return next(specifier + '.js', context);",
  "    throw error;",
  "  }",
  "}",
  "export async function load(url, context, next) {",
  "  if (url.startsWith('file:') && url.endsWith('.js') && !url.includes('/node_modules/')) {",
  "    const loaded = await next(url, { ...context, format: 'module' });",
  "    const text = String(loaded.source);",
  "    const cjs = /\\bmodule\\.exports\\b|\\bexports\\.\\w+\\s*=/.test(text) && !/^\\s*(import|export)\\b/m.test(text);",
  "    return cjs ? next(url, { ...context, format: 'commonjs' }) : loaded;",
  "  }",
  "  return next(url, context);",
  "}",
].join("\n");
register("data:text/javascript," + encodeURIComponent(HOOKS));
globalThis.require = createRequire(pathToFileURL(process.cwd() + "/"));
globalThis.__dirname = process.cwd();
globalThis.__filename = resolvePath("index.js");

function group(name, parent, skipped) {
  return { name, parent, skipped, items: [], beforeEach: [], afterEach: [], beforeAll: [], afterAll: [] };
}
const root = group("", undefined, false);
let current = root;

function describe(name, fn) {
  const g = group(name, current, current.skipped);
  current.items.push({ kind: "group", g });
  const previous = current;
  current = g;
  try { fn(); } finally { current = previous; }
}
describe.skip = (name, fn) => { const saved = current.skipped; current.skipped = true; try { describe(name, fn); } finally { current.skipped = saved; } };
describe.only = describe;
function test(name, fn) { current.items.push({ kind: "test", name, fn, skipped: current.skipped }); }
test.skip = (name, fn) => current.items.push({ kind: "test", name, fn, skipped: true });
test.only = test;
test.todo = (name) => current.items.push({ kind: "test", name, fn: undefined, skipped: true });
const xtest = test.skip;
Object.assign(globalThis, {
  describe, xdescribe: describe.skip, test, it: test, xtest, xit: xtest,
  beforeEach: (fn) => current.beforeEach.push(fn), afterEach: (fn) => current.afterEach.push(fn),
  beforeAll: (fn) => current.beforeAll.push(fn), afterAll: (fn) => current.afterAll.push(fn),
});

function equals(a, b) {
  if (typeof a === "number" && typeof b === "number") return Object.is(a, b) || (a === b && a !== 0);
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  if (a instanceof RegExp || b instanceof RegExp) return String(a) === String(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map && b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !equals(v, b.get(k))) return false;
    return true;
  }
  if (a instanceof Set || b instanceof Set) {
    if (!(a instanceof Set && b instanceof Set) || a.size !== b.size) return false;
    for (const v of a) if (!b.has(v) && ![...b].some((w) => equals(v, w))) return false;
    return true;
  }
  if (Array.isArray(a)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equals(a[i], b[i])) return false;
    return true;
  }
  const keys = (o) => Object.keys(o).filter((k) => o[k] !== undefined);
  const ka = keys(a);
  const kb = keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!Object.prototype.hasOwnProperty.call(b, k) || !equals(a[k], b[k])) return false;
  return true;
}

const show = (v) => inspect(v, { depth: 6, breakLength: Infinity });
class AssertionError extends Error {}

function thrownBy(fn) {
  try { fn(); } catch (error) { return { threw: true, error }; }
  return { threw: false, error: undefined };
}
function throwMatches(error, expected) {
  if (expected === undefined) return true;
  const message = error && typeof error === "object" && "message" in error ? String(error.message) : String(error);
  if (typeof expected === "string") return message.includes(expected);
  if (expected instanceof RegExp) return expected.test(message);
  if (typeof expected === "function") return error instanceof expected;
  if (expected && typeof expected === "object") return message === String(expected.message);
  return false;
}

function matchers(actual, negate) {
  const check = (pass, what) => {
    if (pass === negate) throw new AssertionError("expected " + show(actual) + (negate ? " not " : " ") + what);
  };
  const m = {
    toBe: (e) => check(Object.is(actual, e), "to be " + show(e)),
    toEqual: (e) => check(equals(actual, e), "to equal " + show(e)),
    toStrictEqual: (e) => check(equals(actual, e), "to strictly equal " + show(e)),
    toBeCloseTo: (e, digits = 2) => check(Math.abs(actual - e) < Math.pow(10, -digits) / 2, "to be close to " + show(e)),
    toBeInstanceOf: (c) => check(actual instanceof c, "to be an instance of " + (c && c.name)),
    toMatch: (e) => check(typeof actual === "string" && (e instanceof RegExp ? e.test(actual) : actual.includes(e)), "to match " + show(e)),
    toBeNull: () => check(actual === null, "to be null"),
    toBeUndefined: () => check(actual === undefined, "to be undefined"),
    toBeDefined: () => check(actual !== undefined, "to be defined"),
    toBeTruthy: () => check(Boolean(actual), "to be truthy"),
    toBeFalsy: () => check(!actual, "to be falsy"),
    toBeNaN: () => check(Number.isNaN(actual), "to be NaN"),
    toContain: (e) => check(actual != null && (typeof actual === "string" ? actual.includes(e) : [...actual].includes(e)), "to contain " + show(e)),
    toContainEqual: (e) => check(actual != null && [...actual].some((v) => equals(v, e)), "to contain equal " + show(e)),
    toHaveLength: (n) => check(actual != null && actual.length === n, "to have length " + n),
    toHaveProperty: (k) => check(actual != null && k in Object(actual), "to have property " + show(k)),
    toBeGreaterThan: (n) => check(actual > n, "to be > " + n),
    toBeGreaterThanOrEqual: (n) => check(actual >= n, "to be >= " + n),
    toBeLessThan: (n) => check(actual < n, "to be < " + n),
    toBeLessThanOrEqual: (n) => check(actual <= n, "to be <= " + n),
    toThrow: (e) => {
      if (typeof actual !== "function") throw new AssertionError("toThrow needs a function");
      const { threw, error } = thrownBy(actual);
      if (negate) { if (threw && throwMatches(error, e)) throw new AssertionError("expected no throw, got " + show(error)); return; }
      if (!threw) throw new AssertionError("expected the function to throw " + show(e));
      if (!throwMatches(error, e)) throw new AssertionError("expected a throw matching " + show(e) + ", got " + show(error));
    },
  };
  m.toThrowError = m.toThrow;
  return m;
}
function asyncMatchers(promise, negate, mode) {
  const out = {};
  for (const name of Object.keys(matchers(undefined, negate))) {
    out[name] = async (...args) => {
      let value;
      try {
        value = await promise;
        if (mode === "rejects") throw new AssertionError("expected the promise to reject, it resolved to " + show(value));
      } catch (error) {
        if (error instanceof AssertionError) throw error;
        if (mode === "resolves") throw new AssertionError("expected the promise to resolve, it rejected with " + show(error));
        value = error;
      }
      if (mode === "rejects" && name.startsWith("toThrow")) return matchers(() => { throw value; }, negate)[name](...args);
      return matchers(value, negate)[name](...args);
    };
  }
  return out;
}
globalThis.expect = (actual) => {
  const positive = matchers(actual, false);
  positive.not = matchers(actual, true);
  positive.resolves = asyncMatchers(actual, false, "resolves");
  positive.resolves.not = asyncMatchers(actual, true, "resolves");
  positive.rejects = asyncMatchers(actual, false, "rejects");
  positive.rejects.not = asyncMatchers(actual, true, "rejects");
  return positive;
};

const counts = { passed: 0, failed: 0, skipped: 0 };
const TIMEOUT_MS = 10000;
async function call(fn) {
  let timer;
  try {
    await Promise.race([
      Promise.resolve().then(fn),
      new Promise((_, reject) => { timer = setTimeout(() => reject(new Error("timed out after " + TIMEOUT_MS + " ms")), TIMEOUT_MS); }),
    ]);
  } finally { clearTimeout(timer); }
}
function chain(g, key) {
  const hooks = [];
  for (let x = g; x; x = x.parent) hooks.unshift(...x[key]);
  return key === "afterEach" ? hooks.reverse() : hooks;
}
async function runGroup(g, path) {
  for (const hook of g.beforeAll) await call(hook);
  for (const item of g.items) {
    if (item.kind === "group") { await runGroup(item.g, path.concat(item.g.name)); continue; }
    const name = path.concat(item.name).filter(Boolean).join(" > ");
    if (item.skipped || !item.fn) { counts.skipped++; continue; }
    try {
      for (const hook of chain(g, "beforeEach")) await call(hook);
      await call(item.fn);
      for (const hook of chain(g, "afterEach")) await call(hook);
      counts.passed++;
      console.log("  \u2713 " + name);
    } catch (error) {
      counts.failed++;
      console.log("  \u2715 " + name + "\n      " + (error instanceof Error ? error.message : show(error)).split("\n").join("\n      "));
    }
  }
  for (const hook of g.afterAll) await call(hook);
}

const files = process.argv.slice(2);
if (files.length === 0) { console.error("usage: node jest.mjs SPEC..."); process.exit(2); }
for (const file of files) {
  try {
    await import(pathToFileURL(resolvePath(file)).href);
  } catch (error) {
    console.log("  \u2715 " + file + " could not be loaded: " + (error && error.stack ? error.stack : show(error)));
    counts.failed++;
  }
}
await runGroup(root, []);
console.log("Tests: " + counts.passed + " passed, " + counts.failed + " failed, " + counts.skipped + " skipped");
process.exit(counts.failed > 0 || counts.passed === 0 ? 1 : 0);
`;
