import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { z } from "zod";
import { JEST_SHIM, JEST_SHIM_PATH } from "./jest-shim.js";
import { DEFAULT_BUDGET, type EvalTask, relativeId } from "./task.js";

/**
 * Exercism-style exercises (the layout of exercism tracks and of the polyglot benchmark):
 * `.docs/instructions.md` (+ `instructions.append.md`), `.meta/config.json` naming the solution, test and
 * example files. JavaScript: the spec's first test is visible (the others are `xtest`, skipped), grading
 * runs all of them (un-skipped); the tests run with a small jest-compatible runner, offline. Python: the
 * test file is visible and is restored before grading.
 */

const configSchema = z.object({
  files: z.object({
    solution: z.array(z.string()).min(1),
    test: z.array(z.string()).min(1),
    example: z.array(z.string()).default([]),
  }),
});

export type ExerciseLanguage = "javascript" | "python";

export interface Exercise {
  dir: string;
  language: ExerciseLanguage;
}

function languageOf(dir: string, testFiles: readonly string[]): ExerciseLanguage | undefined {
  if (testFiles.every((f) => f.endsWith(".py"))) return "python";
  if (testFiles.every((f) => /\.(m?js)$/.test(f))) return "javascript";
  if (/(^|\/)python(\/|$)/.test(dir)) return "python";
  return undefined;
}

async function isExercise(dir: string): Promise<boolean> {
  return existsSync(join(dir, ".meta", "config.json")) && existsSync(join(dir, ".docs"));
}

/** Exercise folders at or below `root` (at most 4 levels: polyglot/<lang>/exercises/practice/<name>), sorted. */
export async function findExercises(root: string): Promise<Exercise[]> {
  const found: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (await isExercise(dir)) {
      found.push(dir);
      return;
    }
    if (depth === 0) return;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith(".") || entry.name === "node_modules") continue;
      await walk(join(dir, entry.name), depth - 1);
    }
  };
  await walk(root, 4);
  const exercises: Exercise[] = [];
  for (const dir of found.sort()) {
    const config = await readConfig(dir);
    const language = config && languageOf(dir, config.files.test);
    if (language) exercises.push({ dir, language });
  }
  return exercises;
}

async function readConfig(dir: string): Promise<z.infer<typeof configSchema> | undefined> {
  try {
    return configSchema.parse(JSON.parse(await readFile(join(dir, ".meta", "config.json"), "utf8")));
  } catch {
    return undefined;
  }
}

/** A jest spec with every skipped test and group un-skipped (xtest, xit, xdescribe, test.skip). */
export function unskip(spec: string): string {
  return spec
    .replace(/\bxtest\(/g, "test(")
    .replace(/\bxit\(/g, "it(")
    .replace(/\bxdescribe\(/g, "describe(")
    .replace(/\b(test|it|describe)\.skip\(/g, "$1(");
}

/** One exercise as an eval task (undefined when its config is unusable). */
export async function loadExercise(exercise: Exercise, base: string): Promise<EvalTask | undefined> {
  const { dir, language } = exercise;
  const config = await readConfig(dir);
  if (!config) return undefined;
  const docs = ["instructions.md", "introduction.md", "instructions.append.md"];
  const parts: string[] = [];
  for (const name of docs) {
    const text = await readFile(join(dir, ".docs", name), "utf8").catch(() => undefined);
    if (text) parts.push(text.trim());
  }
  const { solution: solutionFiles, test: testFiles, example } = config.files;
  let command: string;
  // no prototype: the exercise names its files, `__proto__` as well
  const extraFiles: Record<string, string> = Object.create(null);
  const hiddenFiles: Record<string, string> = Object.create(null);
  const visibleFiles = [...testFiles];
  if (language === "javascript") {
    extraFiles[JEST_SHIM_PATH] = JEST_SHIM;
    visibleFiles.push(JEST_SHIM_PATH);
    command = `node ${JEST_SHIM_PATH} ${testFiles.join(" ")}`;
    for (const file of testFiles) hiddenFiles[file] = unskip(await readFile(join(dir, file), "utf8"));
  } else {
    const modules = testFiles.map((f) => f.replace(/\.py$/, "").replace(/\//g, "."));
    command = `python3 -B -m unittest ${modules.join(" ")}`;
    for (const file of testFiles) hiddenFiles[file] = await readFile(join(dir, file), "utf8");
  }
  let solution: Record<string, string> | undefined;
  if (example.length > 0) {
    solution = Object.create(null) as Record<string, string>;
    if (example.length === solutionFiles.length) {
      for (const [i, file] of example.entries()) {
        const target = solutionFiles[i];
        if (target) solution[target] = await readFile(join(dir, file), "utf8");
      }
    } else if (solutionFiles[0] && example[0]) {
      solution[solutionFiles[0]] = await readFile(join(dir, example[0]), "utf8");
    }
  }
  const instruction = [
    ...parts,
    `Implement the solution in ${solutionFiles.join(", ")}. Do not change the tests (${testFiles.join(", ")}).`,
    `Run the tests with: ${command}`,
  ].join("\n\n");
  return {
    id: relativeId(base, dir) === basename(dir) ? basename(dir) : relativeId(base, dir),
    category: language,
    instruction,
    source: {
      kind: "dir",
      dir,
      exclude: [".meta", ".docs", ".approaches", ".articles", "node_modules", ".eslintrc", ".npmrc"],
    },
    extraFiles,
    visible: { command, files: visibleFiles },
    hidden: { command, files: hiddenFiles },
    ...(solution ? { solution } : {}),
    budget: { ...DEFAULT_BUDGET },
  };
}
