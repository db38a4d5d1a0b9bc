import { spawn } from "node:child_process";

/**
 * Runs `argv` under a new pseudo-terminal that is its controlling terminal and its stdin, stdout and
 * stderr (as when umbra runs in the user's terminal), with `fds` (descriptor → file, opened for reading;
 * "/dev/null" for writing) handed over as well; resolves with everything written to the terminal,
 * decoded as latin-1 so that every byte shows.
 */
export function underPty(
  argv: readonly string[],
  options: { env?: NodeJS.ProcessEnv; fds?: Record<number, string> } = {},
): Promise<string> {
  const driver = `
import os, pty, sys, json
spec = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    for number, path in spec["fds"].items():
        opened = os.open(path, os.O_WRONLY if path == "/dev/null" else os.O_RDONLY)
        os.dup2(opened, int(number))
        os.set_inheritable(int(number), True)
    os.execv(spec["argv"][0], spec["argv"])
out = b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
os.waitpid(pid, 0)
sys.stdout.write(out.decode("latin-1"))
`;
  return new Promise((resolve, reject) => {
    const child = spawn("python3", ["-c", driver, JSON.stringify({ argv, fds: options.fds ?? {} })], {
      stdio: ["ignore", "pipe", "inherit"],
      env: options.env ?? process.env,
    });
    let out = "";
    child.stdout.setEncoding("latin1");
    child.stdout.on("data", (chunk: string) => {
      out += chunk;
    });
    child.once("error", reject);
    child.once("close", () => resolve(out));
  });
}
