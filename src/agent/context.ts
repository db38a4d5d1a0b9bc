import type { UmbraConfig } from "../config/config.js";
import { NotIndexedError } from "../index/embedders.js";
import { indexWorkspace } from "../index/indexer.js";
import { type OpenedIndex, openIndex } from "../index/open.js";
import { branchLauncher } from "../lsp/branch-launcher.js";
import { LspHost } from "../lsp/index.js";
import { type Approver, alwaysDeny, openSandbox, type WorkspaceSandbox } from "../sandbox/index.js";
import type { Branch, BranchFiles } from "../shadow/index.js";
import { accessRulesFor } from "./tools/files.js";
import type { ToolContext } from "./tools/types.js";

export interface ContextOptions {
  branch: Branch;
  root: string;
  config: UmbraConfig;
  env?: NodeJS.ProcessEnv;
  /** Network approval for run_command (default: deny). */
  approver?: Approver;
  /** A language-server host to use instead of starting one in the branch (tests). */
  lsp?: LspHost | null;
  /** An opened index to search instead of opening (and maybe building) the workspace's. */
  index?: OpenedIndex;
  signal?: AbortSignal;
  onWarning?: (message: string) => void;
  /** Output of run_command's commands, as it comes. */
  onOutput?: (stream: "stdout" | "stderr", chunk: string) => void;
}

/** A ToolContext plus the resources it opened, released by close(). */
export interface AgentContext extends ToolContext {
  branch: Branch;
  close(): Promise<void>;
}

/** The services the tools use, each started on first use: language servers, the index, the sandbox policy. */
export function createToolContext(options: ContextOptions): AgentContext {
  const env = options.env ?? process.env;
  const { branch, root, config } = options;
  let lspPromise: Promise<LspHost | undefined> | undefined;
  let ownedHost: LspHost | undefined;
  let indexPromise: Promise<OpenedIndex> | undefined;
  const sandboxes = new Map<boolean, Promise<WorkspaceSandbox>>();

  const lsp = (): Promise<LspHost | undefined> => {
    if (options.lsp !== undefined) return Promise.resolve(options.lsp ?? undefined);
    lspPromise ??= (async () => {
      try {
        const { launcher, warnings } = await branchLauncher(branch, config, env);
        for (const warning of warnings) options.onWarning?.(warning);
        ownedHost = new LspHost({ config: config.lsp, launcher, env });
        return ownedHost;
      } catch (error) {
        options.onWarning?.(`language servers are unavailable: ${(error as Error).message.split("\n")[0]}`);
        return undefined;
      }
    })();
    return lspPromise;
  };

  const searchIndex = (): Promise<OpenedIndex> => {
    if (options.index) return Promise.resolve(options.index);
    indexPromise ??= (async () => {
      try {
        return await openIndex(root, config, env);
      } catch (error) {
        if (!(error instanceof NotIndexedError)) throw error;
        await indexWorkspace(root, { config, env });
        return openIndex(root, config, env);
      }
    })();
    indexPromise.catch(() => {
      indexPromise = undefined;
    });
    return indexPromise;
  };

  const sandbox = (network: boolean): Promise<WorkspaceSandbox> => {
    let found = sandboxes.get(network);
    if (!found) {
      found = openSandbox({ workspace: root, config, flags: { mode: "workspace-write", network }, env });
      found.then(
        ({ warnings }) => {
          for (const warning of warnings) options.onWarning?.(warning);
        },
        () => sandboxes.delete(network),
      );
      sandboxes.set(network, found);
    }
    return found;
  };

  let filesPromise: Promise<BranchFiles> | undefined;
  const files = (): Promise<BranchFiles> => {
    filesPromise ??= sandbox(false).then(({ policy }) => branch.files(accessRulesFor(policy, root)));
    filesPromise.catch(() => {
      filesPromise = undefined;
    });
    return filesPromise;
  };

  return {
    branch,
    files,
    root,
    config,
    env,
    lsp,
    searchIndex,
    sandbox,
    approver: options.approver ?? alwaysDeny(),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onOutput ? { onOutput: options.onOutput } : {}),
    async close() {
      if (ownedHost) await ownedHost.shutdown();
      if (indexPromise && !options.index) {
        const opened = await indexPromise.catch(() => undefined);
        opened?.close();
      }
    },
  };
}
