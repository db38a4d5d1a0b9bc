// What the web UI benches share: a scratch repository, `umbra serve --http` (the built CLI) with a data
// dir of its own, and Debian's chromium through playwright-core (--no-sandbox only as root, as in the tests).
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
export const CLI = join(here, "..", "..", "dist", "cli", "main.js");

export function scratchRepo(files) {
  const parent = mkdtempSync(join(tmpdir(), "umbra-webui-bench-"));
  const root = join(parent, "repo");
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  const git = (...args) =>
    execFileSync("git", ["-c", "user.email=b@example.com", "-c", "user.name=b", ...args], { cwd: root });
  git("init", "-q");
  git("add", ".");
  git("commit", "-qm", "init");
  return { parent, root };
}

export async function serve(parent, root) {
  const env = { ...process.env, UMBRA_HOME: join(parent, "data"), XDG_CONFIG_HOME: join(parent, "config") };
  const child = spawn(process.execPath, [CLI, "serve", "--http", "--root", root], {
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  const url = await new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.includes("\n")) resolve(out.split("\n")[0]);
    });
    child.once("exit", (code) => reject(new Error(`umbra serve --http exited ${code}`)));
  });
  return {
    url,
    origin: new URL(url).origin,
    token: new URL(url).searchParams.get("token"),
    stop: async () => {
      execFileSync(process.execPath, [CLI, "serve", "--stop"], { env, stdio: "ignore" });
      child.kill("SIGTERM");
      rmSync(parent, { recursive: true, force: true });
    },
  };
}

export function launch() {
  return chromium.launch({
    executablePath: process.env.UMBRA_CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: process.getuid?.() === 0 ? ["--no-sandbox"] : [],
  });
}
