import { defineConfig } from "vitest/config";
import { scaled } from "./test/helpers/wait.ts";

// Timeouts are bounds for hangs, not for speed: generous, and scaled by UMBRA_TEST_TIME_SCALE on a slow
// or shared machine. A test that fails under load is fixed, never retried (no `retry` here).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/helpers/isolate.ts"],
    testTimeout: scaled(180_000),
    hookTimeout: scaled(180_000),
    pool: "forks",
    // the last line of a run of test/security/: escapes=N broken=M probes=K
    reporters: ["default", "./test/security/reporter.ts"],
  },
});
