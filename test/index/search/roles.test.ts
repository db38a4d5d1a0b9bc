import { describe, expect, it } from "vitest";
import { fileRole } from "../../../src/index/search/roles.js";

describe("fileRole", () => {
  it.each([
    ["src/flask/app.py", "source"],
    ["tests/test_basic.py", "test"],
    ["command_test.go", "test"],
    ["js_tests/admin/DateTimeShortcuts.test.js", "test"],
    ["js_tests/admin/core.js", "test"],
    ["src/trio/_core/_tests/tutil.py", "test"],
    ["doc/data/messages/u/using-constant-test/good.py", "docs"],
    ["benchmarks/utils/src/get-path.ts", "test"],
    ["bench/skip.py", "test"],
    ["perf-measures/type-check/scripts/generate-app.ts", "test"],
    ["docs/api.rst", "docs"],
    ["tutorials/intermediate/legend_guide.py", "docs"],
    ["galleries/users_explain/axes/legend_guide.py", "docs"],
    ["plot_types/basic/stairs.py", "docs"],
    ["examples/color/colorbar_basics.py", "docs"],
    ["src/components/tutorial/steps.tsx", "source"],
    ["CHANGES.rst", "docs"],
    [".devcontainer/on-create-command.sh", "config"],
    [".github/workflows/ci.yml", "config"],
    ["src/.hidden/tool.ts", "config"],
    ["package.json", "config"],
    ["sphinx/locale/da/LC_MESSAGES/sphinx.js", "config"],
    ["vendor/github.com/pkg/errors/errors.go", "config"],
    ["src/pip/_vendor/rich/console.py", "config"],
    ["setuptools/_vendored/packaging/markers.py", "config"],
    ["sklearn/externals/_arff.py", "config"],
    ["requests/packages/urllib3/connectionpool.py", "config"],
    ["requests/packages/__init__.py", "source"],
    ["web/packages/ui/src/button.ts", "source"],
    ["src/pip/_internal/vendoring.py", "source"],
    ["script/bump_changelog.py", "test"],
    ["tools/protected_pip.py", "test"],
    ["noxfile.py", "test"],
    ["build_tools/github/check_wheels.py", "test"],
    ["pylint/scripts/run.py", "source"],
    // a library's own testing package stays with tests: reports carry test cases as reproducers
    ["django/test/testcases.py", "test"],
    ["sympy/testing/runtests.py", "test"],
    ["testing/example_scripts/issue_519.py", "test"],
    ["packages/hono/test/router.ts", "test"],
    ["src/twisted/internet/test/modulehelpers.py", "test"],
  ])("%s is %s", (path, role) => {
    expect(fileRole(path)).toBe(role);
  });
});
