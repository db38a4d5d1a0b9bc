import { describe, expect, it } from "vitest";
import { classifyQuery, type QueryIntent } from "../../../src/index/search/intent.js";
import { parseQuery } from "../../../src/index/search/query.js";

function intentOf(text: string): QueryIntent {
  return classifyQuery(text, parseQuery(text));
}

function kindOf(text: string): string {
  return intentOf(text).kind;
}

describe("classifyQuery", () => {
  it.each([
    "where is the session cookie signed?",
    "how does the router match a path with parameters",
    "How are URL rules with converters compiled",
    "What decides which template loader is used?",
    "session cookie signing",
    "retry backoff for failed uploads",
    "which function escapes html in jinja templates",
    "  where do we parse the config file?  ",
    "Is there a cache for resolved imports?",
  ])("reads a prose question: %s", (text) => {
    expect(intentOf(text)).toEqual({ kind: "question" });
  });

  it("tells what a question asks about: docs or tests", () => {
    expect(intentOf("where is the changelog entry for the new router?").about).toBe("docs");
    expect(intentOf("which docs explain the session interface").about).toBe("docs");
    expect(intentOf("how is the url matcher tested?").about).toBe("tests");
    expect(intentOf("where are the fixtures for the app factory").about).toBe("tests");
    // a docstring is code; an unrelated word that contains "test" is not about tests
    expect(intentOf("where is the docstring signature parsed?").about).toBeUndefined();
    expect(intentOf("where is the latest version compared?").about).toBeUndefined();
    expect(intentOf("what helper do the tests use to run a command?").about).toBe("tests");
    expect(intentOf("which test checks that redirects keep the method").about).toBe("tests");
    expect(intentOf("where are the benchmarks of the router?").about).toBe("tests");
  });

  it("reads docs or tests named before the asking clause as where the asker read, not what they ask for", () => {
    const cited = "the docs say a permanent session lasts a month; where is the cookie's expiry computed?";
    expect(intentOf(cited)).toEqual({ kind: "question" });
    expect(intentOf("the README binds JSON with ShouldBindJSON, what does it do?").about).toBeUndefined();
    expect(intentOf("in tests, how can I change the session before a request?").about).toBeUndefined();
    // the test client is the API tests use, not a test
    expect(intentOf("how does the test client keep cookies between requests?").about).toBeUndefined();
    // asked in the asking clause itself, it is what is asked for
    expect(intentOf("for the router, where do the docs explain wildcards?").about).toBe("docs");
  });

  it.each([
    [
      "title and body",
      "InheritDocstrings metaclass doesn't work for properties\nInside the InheritDocstrings metaclass it uses `inspect.isfunction` which returns `False` for properties.",
    ],
    [
      "code block",
      "xr.where with scalar fails\n```python\nxr.where(xr.DataArray([1, 2, 3]) > 0, 1, 0, keep_attrs=True)\n```\nIndexError: list index out of range",
    ],
    [
      "expected and actual",
      "Calling render() with an empty list: expected an empty string but got None instead",
    ],
    [
      "a long report",
      `When I build the docs with the autodoc extension enabled, ${"the signature of an overloaded method is rendered only once and the others are lost, ".repeat(5)}`,
    ],
    [
      "a traceback inside prose",
      'Sphinx crashes on my project.\n\nTraceback (most recent call last):\n  File "sphinx/cmd/build.py", line 280, in build_main\n    app.build()\nAttributeError: x\n\nIt worked with 3.4. I use the default theme and a custom extension that adds a directive, and nothing else.',
    ],
    [
      "a title, code and a long traceback",
      `ds.merge(da) fails\nWhile xr.merge works, the method fails.\n\n\`\`\`\nTraceback (most recent call last):\n${'  File "/home/me/xarray/xarray/core/merge.py", line 394, in coerce_pandas_values\n    for k, v in obj.items():\n'.repeat(6)}AttributeError: 'DataArray' object has no attribute 'items'\n\`\`\``,
    ],
    [
      "markdown headings",
      "### Describe the bug\nThe router ignores trailing slashes\n### Expected behaviour\nA 308",
    ],
  ])("reads a bug report: %s", (_, text) => {
    expect(kindOf(text)).toBe("report");
  });

  it.each([
    ["parseQuery", "parseQuery", []],
    ["`parseQuery`", "parseQuery", []],
    ["parseQuery()", "parseQuery", []],
    ["Flask.run", "run", ["Flask"]],
    ["session_cookie", "session_cookie", []],
    ["std::vector", "vector", ["std"]],
    ["Foo#bar", "bar", ["Foo"]],
    ["$scope", "$scope", []],
    ["class Router", "Router", []],
    ["def url_for", "url_for", []],
    ["func (r *Router) Match", undefined, undefined],
    ["router", "router", []],
  ] as const)("reads an identifier: %s", (text, name, qualifiers) => {
    const intent = intentOf(text);
    if (name === undefined) expect(intent.kind).not.toBe("identifier");
    else expect(intent).toEqual({ kind: "identifier", name: { name, qualifiers } });
  });

  it.each([
    ["src/router/trie.ts", "src/router/trie.ts"],
    ["./src/app.py", "src/app.py"],
    ["app.py", "app.py"],
    ["`conf.py`", "conf.py"],
    ["src/router/", "src/router/"],
    ["README", "README"],
    ["C:\\work\\proj\\src\\main.go", "work/proj/src/main.go"],
    ["https://github.com/pallets/flask/blob/main/src/flask/app.py", "src/flask/app.py"],
  ])("reads a path: %s", (text, path) => {
    expect(intentOf(text)).toEqual({ kind: "path", target: { path } });
  });

  it.each([
    ["src/a.ts:42", { path: "src/a.ts", line: 42 }],
    ["a.py:10:5", { path: "a.py", line: 10 }],
    ["src/a.ts:10-20", { path: "src/a.ts", line: 10, endLine: 20 }],
    ["src/a.ts#L106", { path: "src/a.ts", line: 106 }],
    ["src/a.ts#L10-L20", { path: "src/a.ts", line: 10, endLine: 20 }],
    ["src/a.ts#L10C3-L12C9", { path: "src/a.ts", line: 10, endLine: 12 }],
    ["/home/me/proj/pkg/x.go:7", { path: "home/me/proj/pkg/x.go", line: 7 }],
    ["`src/a.ts:42`.", { path: "src/a.ts", line: 42 }],
    [
      "https://github.com/pallets/flask/blob/2.3.x/src/flask/sessions.py#L106",
      { path: "src/flask/sessions.py", line: 106 },
    ],
    [
      "https://gitlab.com/group/sub/proj/-/blob/main/lib/a.rb#L10-20",
      { path: "lib/a.rb", line: 10, endLine: 20 },
    ],
    [
      "https://bitbucket.org/team/repo/src/abc123/app/models.py#lines-5:9",
      { path: "app/models.py", line: 5, endLine: 9 },
    ],
  ])("reads a location: %s", (text, target) => {
    expect(intentOf(text)).toEqual({ kind: "location", target });
  });

  it.each([
    ["src/a.ts line 42", { path: "src/a.ts", line: 42 }],
    ["src/a.ts, lines 10-20", { path: "src/a.ts", line: 10, endLine: 20 }],
    ["a.py at line 7", { path: "a.py", line: 7 }],
    ["pkg/x.go (line 7)", { path: "pkg/x.go", line: 7 }],
    ["src/a.ts L106", { path: "src/a.ts", line: 106 }],
    ["`src/a.ts` lines 10 to 20", { path: "src/a.ts", line: 10, endLine: 20 }],
    ["Line 42 of src/a.ts", { path: "src/a.ts", line: 42 }],
    ["lines 10–20 in ./a.py", { path: "a.py", line: 10, endLine: 20 }],
  ])("reads a location said in words: %s", (text, target) => {
    expect(intentOf(text)).toEqual({ kind: "location", target });
  });

  it.each([
    "Flask line 42",
    "the line 42 of a.py raises KeyError",
    "src/a.ts line zero",
    "a.py line 0",
    "where is line 42 of src/a.ts handled?",
  ])("does not read %s as a location", (text) => {
    expect(intentOf(text).kind).not.toBe("location");
  });

  it.each([
    [
      "Python",
      'Traceback (most recent call last):\n  File "app.py", line 12, in <module>\n    main()\n  File "/usr/lib/python3/site-packages/flask/app.py", line 880, in run\n    run_simple(host, port, self)\n    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^\nOSError: [Errno 98] Address already in use',
    ],
    [
      "Node",
      "TypeError: Cannot read properties of undefined (reading 'total')\n    at Invoice.total (/srv/app/src/billing/invoice.ts:31:7)\n    at render (/srv/app/src/view.ts:12:3)\n    at node:internal/main/run_main_module:28:49",
    ],
    [
      "Java",
      'Exception in thread "main" java.lang.IllegalStateException: closed\n\tat com.example.store.Pool.take(Pool.java:42)\n\tat com.example.App.main(App.java:10)\nCaused by: java.io.IOException: gone\n\t... 2 more',
    ],
    [
      "Go",
      "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.pick(...)\n\t/home/me/proj/main.go:8\nmain.main()\n\t/home/me/proj/main.go:14 +0x1d\nexit status 2",
    ],
    [
      "Node, from the throwing line",
      "/srv/app/src/view.js:12\n    throw new Error('no view');\n    ^\n\nError: no view\n    at render (/srv/app/src/view.js:12:11)",
    ],
  ])("reads a %s stack trace", (_, text) => {
    expect(kindOf(text)).toBe("trace");
  });

  it("reads each trace's innermost frame first", () => {
    const python = parseQuery(
      'Traceback (most recent call last):\n  File "a.py", line 1, in outer\n  File "b.py", line 2, in inner\nValueError',
    );
    expect(python.frames.map((frame) => frame.path)).toEqual(["b.py", "a.py"]);
    const node = parseQuery("Error: x\n    at inner (src/b.ts:2:1)\n    at outer (src/a.ts:1:1)");
    expect(node.frames.map((frame) => frame.path)).toEqual(["src/b.ts", "src/a.ts"]);
    const java = parseQuery("x\n\tat com.example.store.Pool$Slot.take(Pool.java:42)");
    expect(java.frames).toEqual([{ path: "com/example/store/Pool.java", line: 42, symbol: "take" }]);
    const go = parseQuery("goroutine 1 [running]:\nmain.main()\n\t/home/me/proj/cmd/main.go:14 +0x1d");
    expect(go.frames).toEqual([{ path: "home/me/proj/cmd/main.go", line: 14 }]);
  });

  it.each([
    ["empty", ""],
    ["blank", "   \n\t "],
    ["a bare anchor", "#L10"],
    ["a number", "42"],
    ["punctuation", "?!?"],
    ["a host and port", "localhost:8080"],
    ["a colon without a line", "src/a.ts:abc"],
    ["line zero", "src/a.ts:0"],
    ["an unknown host's link", "https://example.com/a/b/blob/main/x.py#L3"],
    ["a broken link", "https://github.com/%%/blob"],
  ])("reads odd input without a target: %s", (_, text) => {
    const intent = intentOf(text);
    expect(intent.target?.line ?? 0).toBe(0);
    expect(["question", "report", "identifier", "path"]).toContain(intent.kind);
  });

  // Each of these took minutes when a regular expression backtracked over the whole text (200 kB of one
  // word: about 7 minutes); linear, they take milliseconds. The generous timeout is the only bound.
  it("stays linear on huge and hostile inputs", { timeout: 120_000 }, () => {
    const hostile = [
      "a".repeat(200_000),
      "a/".repeat(100_000),
      "a.".repeat(100_000),
      `at ${"a.".repeat(100_000)}`,
      `${"a:1".repeat(50_000)}x`,
      `${"(".repeat(1000)}x${")".repeat(1000)}`,
      `File "${"x".repeat(100_000)}`,
      "`a".repeat(100_000),
      `${"Error ".repeat(30_000)}\n`.repeat(3),
      `https://github.com/${"a/".repeat(50_000)}#L1`,
    ];
    for (const text of hostile) expect(intentOf(text).kind).toBeTypeOf("string");
  });
});
