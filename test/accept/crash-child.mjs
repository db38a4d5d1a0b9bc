// The crash test's child: runs one accept from the built dist/ on the folder and changes of the JSON
// file argv[2] (states as {kind, mode, data (base64)} / {kind, target} / {kind}), with the environment
// it was given (UMBRA_ACCEPT_CRASH_AFTER makes it SIGKILL itself at a step). Prints the report, then
// the number of steps counted.
import { readFileSync } from "node:fs";
import { acceptChanges } from "../../dist/accept/index.js";

function state(value) {
  if (value.kind !== "file") return value;
  const data = Buffer.from(value.data, "base64");
  return { kind: "file", mode: value.mode, size: data.length, load: async () => data };
}

// UMBRA_CRASH_TEST_COUNT: count the steps instead (the seam, set to 1, then asks for a kill at each)
let steps = 0;
if (process.env.UMBRA_CRASH_TEST_COUNT) {
  const kill = process.kill.bind(process);
  process.kill = (pid, signal) => {
    if (pid !== process.pid || signal !== "SIGKILL") return kill(pid, signal);
    steps += 1;
    return true;
  };
}

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const changes = spec.changes.map((c) => ({ path: c.path, base: state(c.base), branch: state(c.branch) }));
const report = await acceptChanges({ root: spec.root, changes });
process.stdout.write(`${JSON.stringify({ written: report.written, applied: report.applied })}\n`);
process.stdout.write(`${JSON.stringify({ steps })}\n`);
