import { acceptSummary } from "../accept/accept.js";
import {
  AcceptError,
  acceptChanges,
  rebaseBranch,
  type Settlement,
  undoLastAccept,
} from "../accept/index.js";
import { type Verification, verifyAccept } from "../accept/verify.js";
import { CassetteError } from "../agent/cassette.js";
import { agentChanges } from "../agent/run.js";
import { refused } from "../agent/tools/files.js";
import {
  applyPatchTool,
  definitionTool,
  editTool,
  listFilesTool,
  readFileTool,
  referencesTool,
} from "../agent/tools/index.js";
import { lintFeedback } from "../agent/tools/lint-feedback.js";
import { lintTargets } from "../agent/tools/lints.js";
import { resolvePosition } from "../agent/tools/navigation.js";
import { runCommand } from "../agent/tools/run-command.js";
import { cleanPath, type ToolContext, type ToolResult } from "../agent/tools/types.js";
import { deleteNetworkRule, savedNetworkRules } from "../config/network-rules.js";
import { workspaceId } from "../config/paths.js";
import { compareResults } from "../eval/compare.js";
import { htmlReport } from "../eval/report.js";
import { EvalRunNotFoundError, listEvalRuns, loadEvalRun } from "../eval/store.js";
import { NotIndexedError } from "../index/embedders.js";
import { indexStatus } from "../index/status.js";
import { ShadowError } from "../shadow/index.js";
import { FileAccessError, shownPath } from "../workspace/errors.js";
import {
  type AcceptResult,
  type Caller,
  type CallOptions,
  type DiffResult,
  ENGINE_WIDE,
  type EngineWideName,
  type LintsResult,
  type OperationName,
  type ParsedParamsOf,
  type ResultOf,
  type RunToolResult,
  type SavedRule,
  type StatusResult,
  type ToolOutcome,
} from "./api.js";
import type { ApprovalQueue } from "./approvals.js";
import { EngineError } from "./errors.js";
import { grepOp, searchOp } from "./find.js";
import type { SessionHub } from "./sessions.js";
import type { Workspace, WorkspaceHub } from "./workspaces.js";

export interface EngineFacts {
  pid: number;
  startedAt: string;
  clients: number;
}

/** What the engine holds besides its workspaces: agent sessions, their approvals queue, live events. */
export interface EngineServices {
  sessions: SessionHub;
  approvals: ApprovalQueue;
}

type WorkspaceOperation = Exclude<OperationName, EngineWideName>;

export type Handler<N extends WorkspaceOperation> = (
  ws: Workspace,
  params: ParsedParamsOf<N>,
  caller: Caller,
  call: CallOptions & { facts: EngineFacts; services: EngineServices },
) => Promise<ResultOf<N>>;

/** An operation of the engine as a whole (no workspace). */
type WideHandler<N extends EngineWideName> = (
  hub: WorkspaceHub,
  params: ParsedParamsOf<N>,
  services: EngineServices,
) => Promise<ResultOf<N>>;

const outcome = (result: ToolResult): ToolOutcome => ({
  ok: result.ok,
  text: result.output,
  ...(result.changed ? { changed: result.changed } : {}),
  ...(result.lintErrors !== undefined ? { lintErrors: result.lintErrors } : {}),
});

/** A tool of the agent's, run in the branch named (or read-only in the user's folder). */
async function viaTool(
  ws: Workspace,
  caller: Caller,
  branch: string | undefined,
  run: (context: ToolContext) => Promise<ToolResult>,
): Promise<ToolOutcome> {
  if (branch === undefined) return outcome(await run(await ws.context(undefined, caller)));
  return ws.inBranch(branch, async (held) => outcome(await run(await ws.context(held, caller))));
}

const writeFileOp: Handler<"writeFile"> = (ws, p, caller) =>
  viaTool(ws, caller, p.branch, async (context) => {
    const files = await context.files();
    const asked = cleanPath(p.path, ws.root);
    if (!asked)
      return { ok: false, output: `${shownPath(p.path)} is not a file inside the workspace`, summary: "" };
    let target: string;
    try {
      target = await files.writable(asked);
      await files.write(target, p.content);
    } catch (error) {
      return refused(error);
    }
    const lint = await lintFeedback(context, [target]);
    return {
      ok: true,
      output: `wrote ${shownPath(target)} (${Buffer.byteLength(p.content)} bytes)\n${lint.text}`,
      summary: "",
      changed: [target],
      lintErrors: lint.errors,
    };
  });

const lintsOp: Handler<"lints"> = (ws, p, caller) =>
  ws.inBranch(p.branch, async (held): Promise<LintsResult> => {
    const context = await ws.context(held, caller);
    const targets = await lintTargets(p.path, context);
    if (!Array.isArray(targets)) throw new EngineError("REFUSED", targets.output);
    if (targets.length === 0)
      return {
        files: [],
        introduced: [],
        errors: 0,
        partial: false,
        partialReasons: [],
        text: "Lints: nothing changed in this branch yet.",
      };
    const lint = await lintFeedback(context, targets);
    return {
      files: lint.linted,
      introduced: lint.introduced,
      errors: lint.errors,
      partial: lint.partialReasons.length > 0,
      partialReasons: lint.partialReasons,
      text: lint.text,
    };
  });

/** The file and position of a navigation request, its host and door; an EngineError when it has none. */
async function position(
  ws: Workspace,
  caller: Caller,
  p: ParsedParamsOf<"hover">,
  branch: string | undefined,
) {
  const run = async (context: ToolContext) => {
    const resolved = await resolvePosition(p, context);
    if (!("host" in resolved)) throw new EngineError("REFUSED", resolved.output);
    return resolved;
  };
  if (branch === undefined) return run(await ws.context(undefined, caller));
  return ws.inBranch(branch, async (held) => run(await ws.context(held, caller)));
}

const hoverOp: Handler<"hover"> = async (ws, p, caller) => {
  const { host, source, path, position: at } = await position(ws, caller, p, p.branch);
  const hover = await host.hover(source, path, at);
  return hover
    ? { hover, text: hover.text }
    : { text: `nothing to show at ${shownPath(path)}:${at.line}:${at.column}` };
};

const symbolsOp: Handler<"documentSymbols"> = async (ws, p, caller) => {
  const { host, source, path } = await position(ws, caller, { ...p, line: 1, column: 1 }, p.branch);
  const symbols = await host.documentSymbols(source, path);
  const text = symbols.length
    ? symbols
        .map(
          (s) =>
            `${s.location.line}:${s.location.column} ${s.kind} ${s.container ? `${s.container}.` : ""}${s.name}`,
        )
        .join("\n")
    : `no symbols in ${shownPath(path)}`;
  return { symbols, text };
};

const runOp: Handler<"run"> = (ws, p, caller, call) =>
  ws.inBranch(p.branch, async (held): Promise<RunToolResult> => {
    const context = await ws.context(held, caller, call.signal);
    const done = await runCommand(
      {
        command: p.command,
        network: p.network,
        ...(p.timeoutSeconds ? { timeoutSeconds: p.timeoutSeconds } : {}),
        ...(p.reason ? { reason: p.reason } : {}),
      },
      context,
    );
    const run = done.run;
    return {
      ran: run !== undefined,
      exitCode: run?.exitCode ?? null,
      signal: run?.signal ?? null,
      timedOut: run?.timedOut ?? false,
      stdout: run?.stdout ?? "",
      stderr: run?.stderr ?? "",
      durationMs: run?.durationMs ?? 0,
      notes: run ? run.notes.map((note) => note.message) : [done.outcome.output],
      network: done.network,
      text: done.outcome.output,
    };
  });

const diffOp: Handler<"diff"> = (ws, p) =>
  ws.inBranch(p.branch, async ({ branch }): Promise<DiffResult> => {
    const changes = await agentChanges(branch);
    return {
      diff: await branch.diff({}, changes),
      files: changes.map((change) => ({
        path: change.path,
        kind:
          change.base.kind === "absent" ? "added" : change.branch.kind === "absent" ? "deleted" : "modified",
      })),
      unknownBases: changes.filter((change) => change.base.kind === "unknown").map((change) => change.path),
    };
  });

/** +/- line counts of a unified diff, per file. */
function diffstat(diff: string): { path: string; added: number; removed: number }[] {
  const out: { path: string; added: number; removed: number }[] = [];
  let current: { path: string; added: number; removed: number } | undefined;
  for (const line of diff.split("\n")) {
    const file = /^\+\+\+ (?:b\/)?(.*)$/.exec(line);
    if (file && !line.startsWith("+++ /dev/null")) {
      current = { path: file[1] ?? "", added: 0, removed: 0 };
      out.push(current);
    } else if (line.startsWith("--- ") || line.startsWith("+++ ")) continue;
    else if (current && line.startsWith("+")) current.added++;
    else if (current && line.startsWith("-")) current.removed++;
  }
  return out;
}

/** The command --verify runs: the one asked, or (true) the configured one; it runs sandboxed in a fresh branch. */
function verifyCommand(ws: Workspace, verify: string | boolean): string | undefined {
  if (typeof verify === "string") return verify;
  return ws.config.agent.testCommand ?? ws.config.agent.workspaceTestCommand;
}

/** The resolutions asked, by workspace-relative path (untrusted: a path out of the workspace is refused). */
function settlements(ws: Workspace, given: ParsedParamsOf<"accept">["resolve"]): Map<string, Settlement> {
  const out = new Map<string, Settlement>();
  for (const { path, choice, content, yoursSha256 } of given ?? []) {
    const rel = cleanPath(path, ws.root);
    if (!rel)
      throw new EngineError("BAD_REQUEST", `resolve: ${shownPath(path)} is not a file inside the workspace`);
    if (out.has(rel))
      throw new EngineError("BAD_REQUEST", `resolve: ${shownPath(rel)} is given more than once`);
    out.set(rel, {
      choice,
      ...(content !== undefined ? { content: Buffer.from(content, "utf8") } : {}),
      ...(yoursSha256 !== undefined ? { yoursSha256 } : {}),
    });
  }
  return out;
}

const acceptOp: Handler<"accept"> = (ws, p, caller, call) =>
  ws.inBranch(p.branch, async ({ branch }): Promise<AcceptResult> => {
    const resolve = settlements(ws, p.resolve);
    const changes = await agentChanges(branch);
    const request = {
      root: ws.root,
      changes,
      allOrNothing: !p.partial,
      config: ws.config,
      env: ws.env,
      ...(resolve.size > 0 ? { resolve } : {}),
      ...(p.files || p.hunks ? { select: { files: p.files, ...(p.hunks ? { hunks: p.hunks } : {}) } } : {}),
    };
    const fail = (error: unknown): never => {
      if (error instanceof AcceptError && error.code === "USAGE")
        throw new EngineError("BAD_REQUEST", error.message);
      if (error instanceof AcceptError && error.code === "CHANGED")
        throw new EngineError("STALE", error.message);
      throw error;
    };
    const plan = await acceptChanges({ ...request, dryRun: true }).catch(fail);
    // the diff's line counts are worked out only for the question
    const ask = async () => {
      const planned = new Set(plan.planned.map((entry) => entry.path));
      return caller.hooks
        .confirmAccept({
          branch: branch.id,
          summary: `${plan.message}${plan.conflicts.length ? `; conflicts in ${plan.conflicts.map((c) => c.path).join(", ")}` : ""}`,
          diffstat: diffstat(await branch.diff({}, changes)).filter((entry) => planned.has(entry.path)),
        })
        .catch(() => false);
    };
    /** The plan, answered as an accept that wrote nothing. */
    const notWritten = (
      fields: Pick<AcceptResult, "confirmed" | "message" | "verification">,
    ): AcceptResult => {
      const { planned: _planned, ...rest } = plan;
      return { ...rest, written: false, applied: [], discarded: false, ...fields };
    };
    const confirmed = plan.planned.length > 0 && (ws.config.mcp.autoAccept || (await ask()));
    if (!confirmed)
      return notWritten({
        confirmed: false,
        message:
          plan.planned.length === 0
            ? acceptSummary(plan, false)
            : "not accepted: the user did not confirm (nothing was written; the branch is kept)",
      });
    let verification: Verification | undefined;
    if (p.verify !== undefined && p.verify !== false) {
      verification = await verifyAccept(request, verifyCommand(ws, p.verify), call.signal).catch(fail);
      if (!verification.passed)
        return notWritten({
          confirmed: true,
          verification,
          message: `not accepted: the result does not pass verification (${verification.problems[0]?.split("\n")[0] ?? "failed"}); nothing was written`,
        });
    }
    const { planned: _planned, ...report } = await acceptChanges(request).catch(fail);
    const all = report.conflicts.length === 0 && report.refused.length === 0 && !p.files;
    if (all) await branch.discard();
    return { ...report, confirmed: true, discarded: all, ...(verification ? { verification } : {}) };
  });

const statusOp: Handler<"status"> = async (ws, _p, _caller, { facts }): Promise<StatusResult> => ({
  root: ws.root,
  index: { ...(await indexStatus(ws.root, ws.env)), watched: ws.watched, syncing: ws.syncing },
  branches: await ws.branches(),
  servers: await ws.servers(),
  engine: { ...facts, rssBytes: process.memoryUsage().rss },
});

const lintOp: Handler<"lint"> = async (ws, p) => {
  const files = await ws.folderFiles();
  const host = await ws.lsp();
  if (!host) throw new EngineError("UNAVAILABLE", "language servers are unavailable");
  const asked = cleanPath(p.path, ws.root);
  if (asked === undefined)
    throw new EngineError("REFUSED", `${shownPath(p.path)} is not inside the workspace`);
  if (!host.detect(ws.root, asked))
    throw new EngineError("UNAVAILABLE", `no language server handles ${asked}`);
  const target = await files.resolve(asked);
  return host.lint(files, target.rel, p.content === undefined ? {} : { content: p.content });
};

const evalRun = (ws: Workspace, id: string) => loadEvalRun(ws.root, id, ws.env);

const evalListOp: Handler<"evalList"> = async (ws) => ({
  runs: (await listEvalRuns(ws.root, ws.env)).map(({ id, createdAt, results }) => ({
    id,
    createdAt,
    agent: results.agent,
    model: results.model,
    tasks: results.summary.tasks,
    passed: results.summary.passed,
    passRate: results.summary.passRate,
  })),
});

/** The rules saved for the open workspaces, with where each belongs. */
function savedRules(hub: WorkspaceHub): SavedRule[] {
  return hub.roots().flatMap((root) =>
    savedNetworkRules(root, hub.options.env).map((entry) => ({
      ...entry,
      root,
      workspace: workspaceId(root),
    })),
  );
}

const WIDE_HANDLERS: { [N in EngineWideName]: WideHandler<N> } = {
  approvalList: async (_hub, _p, { approvals }) => ({ approvals: approvals.list() }),
  approvalAnswer: async (_hub, p, { approvals }) => approvals.answer(p.approval, p.decision),
  ruleList: async (hub) => ({ rules: savedRules(hub) }),
  ruleDelete: async (hub, p) => {
    const found = savedRules(hub).find((entry) => entry.id === p.rule);
    if (!found || !deleteNetworkRule(found.root, found.id, hub.options.env))
      throw new EngineError(
        "NOT_FOUND",
        `no saved rule ${JSON.stringify(p.rule)} (GET /api/rules lists them)`,
      );
    return { deleted: p.rule };
  },
};

const HANDLERS: { [N in WorkspaceOperation]: Handler<N> } = {
  search: searchOp,
  grep: grepOp,
  readFile: (ws, p, caller) => viaTool(ws, caller, p.branch, (c) => readFileTool.run(p, c)),
  listFiles: (ws, p, caller) => viaTool(ws, caller, p.branch, (c) => listFilesTool.run(p, c)),
  branchCreate: (ws, p, caller) => ws.create(caller, p.label),
  branchList: async (ws) => ({ branches: await ws.branches() }),
  branchDiscard: async (ws, p) => {
    await ws.discard(p.branch);
    return { discarded: p.branch };
  },
  edit: (ws, p, caller) => viaTool(ws, caller, p.branch, (c) => editTool.run(p, c)),
  applyPatch: (ws, p, caller) => viaTool(ws, caller, p.branch, (c) => applyPatchTool.run(p, c)),
  writeFile: writeFileOp,
  lints: lintsOp,
  definition: (ws, p, caller) => viaTool(ws, caller, p.branch, (c) => definitionTool.run(p, c)),
  references: (ws, p, caller) => viaTool(ws, caller, p.branch, (c) => referencesTool.run(p, c)),
  hover: hoverOp,
  documentSymbols: symbolsOp,
  run: runOp,
  diff: diffOp,
  accept: acceptOp,
  rebase: (ws, p) => ws.inBranch(p.branch, ({ branch }) => rebaseBranch(branch)),
  status: statusOp,
  lint: lintOp,
  undo: (ws) => undoLastAccept(ws.root, { env: ws.env }),
  sessionStart: (ws, p, _caller, { services }) => {
    const { root: _root, ...request } = p;
    return services.sessions.start(ws, request);
  },
  sessionList: async (ws, _p, _caller, { services }) => ({ sessions: await services.sessions.list(ws) }),
  sessionGet: (ws, p, _caller, { services }) => services.sessions.get(ws, p.session),
  sessionStop: (ws, p, _caller, { services }) => services.sessions.stop(ws, p.session),
  sessionResume: (ws, p, _caller, { services }) => services.sessions.resume(ws, p),
  evalList: evalListOp,
  evalReport: async (ws, p) => {
    const run = await evalRun(ws, p.run);
    return { html: htmlReport(run.results, run.timings) };
  },
  evalCompare: async (ws, p) => {
    const [a, b] = await Promise.all([evalRun(ws, p.a), evalRun(ws, p.b)]);
    return compareResults(a.results, b.results);
  },
};

/** The engine's error for a failure of the layers below (their own error types). */
function engineError(error: unknown): EngineError {
  if (error instanceof EngineError) return error;
  if (error instanceof NotIndexedError) return new EngineError("UNAVAILABLE", error.message);
  if (error instanceof FileAccessError)
    return new EngineError(error.code === "MISSING" ? "NOT_FOUND" : "REFUSED", error.message);
  if (error instanceof EvalRunNotFoundError) return new EngineError("NOT_FOUND", error.message);
  if (error instanceof CassetteError) return new EngineError("BAD_REQUEST", error.message);
  if (error instanceof ShadowError)
    return new EngineError(error.code === "BRANCH_NOT_FOUND" ? "NOT_FOUND" : "INTERNAL", error.message);
  const name = (error as { name?: string })?.name;
  if (name === "AbortError") return new EngineError("CANCELLED", "the request was cancelled");
  if (name === "WorkspaceError" || name === "ConfigError")
    return new EngineError("BAD_REQUEST", (error as Error).message);
  return new EngineError("INTERNAL", error instanceof Error ? error.message : String(error));
}

function isWide(name: OperationName): name is EngineWideName {
  return (ENGINE_WIDE as readonly string[]).includes(name);
}

/** Carries out one checked request. */
export async function runOperation<N extends OperationName>(
  hub: WorkspaceHub,
  caller: Caller,
  name: N,
  params: ParsedParamsOf<N>,
  options: CallOptions,
  facts: EngineFacts,
  services: EngineServices,
): Promise<ResultOf<N>> {
  try {
    if (isWide(name)) {
      const wide = WIDE_HANDLERS[name] as unknown as WideHandler<EngineWideName>;
      return (await wide(hub, params as ParsedParamsOf<EngineWideName>, services)) as ResultOf<N>;
    }
    const { root } = params as ParsedParamsOf<WorkspaceOperation>;
    const ws = await hub.workspace(root);
    ws.refresh();
    const handler = HANDLERS[name as WorkspaceOperation] as unknown as Handler<WorkspaceOperation>;
    return (await handler(ws, params as ParsedParamsOf<WorkspaceOperation>, caller, {
      ...options,
      facts,
      services,
    })) as ResultOf<N>;
  } catch (error) {
    throw engineError(error);
  }
}
