/**
 * Setup of every test file (vitest `setupFiles`): the file gets data and config folders of its own, so
 * nothing is read from or written to the machine's `~/.local/share/umbra` and `~/.config/umbra`: a
 * developer's configuration does not change what tests see, and suites running at the same time (or
 * test files in parallel) do not share workspaces, branches or sandbox journals. Tests that need their
 * own folders still set UMBRA_HOME and XDG_CONFIG_HOME in the environments they pass.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

const base = mkdtempSync(join(tmpdir(), "umbra-test-file-"));
process.env.UMBRA_HOME = join(base, "data");
process.env.XDG_CONFIG_HOME = join(base, "config");

afterAll(() => {
  rmSync(base, { recursive: true, force: true, maxRetries: 5 });
});
