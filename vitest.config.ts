import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // the last line of a run of test/security/: escapes=N broken=M probes=K
    reporters: ["default", "./test/security/reporter.ts"],
  },
});
