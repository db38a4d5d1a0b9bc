import { describe, expect, it } from "vitest";
import { fileRole } from "../../../src/index/search/roles.js";

describe("fileRole", () => {
  it.each([
    ["src/flask/app.py", "source"],
    ["tests/test_basic.py", "test"],
    ["command_test.go", "test"],
    ["benchmarks/utils/src/get-path.ts", "test"],
    ["perf-measures/type-check/scripts/generate-app.ts", "test"],
    ["docs/api.rst", "docs"],
    ["CHANGES.rst", "docs"],
    [".devcontainer/on-create-command.sh", "config"],
    [".github/workflows/ci.yml", "config"],
    ["src/.hidden/tool.ts", "config"],
    ["package.json", "config"],
    ["vendor/github.com/pkg/errors/errors.go", "config"],
    ["src/pip/_vendor/rich/console.py", "config"],
    ["setuptools/_vendored/packaging/markers.py", "config"],
    ["src/pip/_internal/vendoring.py", "source"],
    ["script/bump_changelog.py", "test"],
    ["tools/protected_pip.py", "test"],
    ["noxfile.py", "test"],
    ["build_tools/github/check_wheels.py", "test"],
    ["pylint/scripts/run.py", "source"],
  ])("%s is %s", (path, role) => {
    expect(fileRole(path)).toBe(role);
  });
});
