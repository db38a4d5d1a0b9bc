// `npm run build:ui`: the web UI into dist/ui: the page's modules (tsc -p ui), its HTML and CSS, and
// Prism (pinned in package.json) as one file of the grammars the review page highlights.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "dist", "ui");
const require = createRequire(import.meta.url);

rmSync(out, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [
    join(dirname(require.resolve("typescript/package.json")), "bin", "tsc"),
    "-p",
    join(here, "tsconfig.json"),
  ],
  {
    stdio: "inherit",
  },
);
for (const file of ["index.html", "style.css"]) copyFileSync(join(here, file), join(out, file));

// Order matters: a grammar after the ones it extends.
const GRAMMARS = [
  "clike",
  "markup",
  "css",
  "javascript",
  "typescript",
  "python",
  "go",
  "c",
  "rust",
  "json",
  "bash",
];
const components = dirname(require.resolve("prismjs/components/prism-core.min.js"));
const prism = [
  "/* Prism 1.30.0 (MIT), core and the grammars the review page uses */",
  readFileSync(join(components, "prism-core.min.js"), "utf8"),
  ...GRAMMARS.map((name) => readFileSync(join(components, `prism-${name}.min.js`), "utf8")),
].join("\n");
mkdirSync(join(out, "vendor"), { recursive: true });
writeFileSync(join(out, "vendor", "prism.js"), prism);
