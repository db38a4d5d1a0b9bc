import type { Reporter, TestModule } from "vitest/node";

/**
 * Sums up the security suite (test/security/): every test there is a probe. A probe named `work: ...`
 * is ordinary work that must keep working (failing: broken); every other probe is an attack that must
 * fail (the test failing: an escape). Probes skipped on purpose are not counted. Prints, as the run's last line,
 * `escapes=N broken=M probes=K`; prints nothing when no probe ran.
 */
export default class SecuritySummary implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let escapes = 0;
    let broken = 0;
    let probes = 0;
    for (const module of testModules) {
      if (!module.moduleId.includes("/test/security/")) continue;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        // skipped on purpose (it.skipIf); a probe skipped because a hook failed counts as failed
        if (state === "skipped" && test.options.mode !== "run") continue;
        probes++;
        if (state === "passed") continue;
        if (/(^|\s)work:/.test(test.fullName)) broken++;
        else escapes++;
      }
    }
    if (probes > 0) process.stdout.write(`escapes=${escapes} broken=${broken} probes=${probes}\n`);
  }
}
