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
  ])("%s is %s", (path, role) => {
    expect(fileRole(path)).toBe(role);
  });
});
