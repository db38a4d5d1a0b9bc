/**
 * `umbra mcp --print-config CLIENT`: how each MCP client is told to start `umbra mcp` over stdio, in
 * that client's own format (checked against each client's documentation):
 * - Claude Code: `claude mcp add NAME -- COMMAND ARGS...` (a local stdio server; it starts it in the project);
 * - Codex: a `[mcp_servers.NAME]` table with `command` and `args` in `~/.codex/config.toml`;
 * - Cursor: `mcpServers.NAME` with `command` and `args` in `.cursor/mcp.json`;
 * - opencode: `mcp.servers.NAME` with `type: "local"` and `command` (one array) in `opencode.json`;
 * - VS Code: `servers.NAME` with `type: "stdio"`, `command` and `args` in `.vscode/mcp.json`
 *   (`${workspaceFolder}` is VS Code's variable for the open folder).
 * Pure: the command that starts this installation's `umbra mcp` in, the text out.
 */

export const MCP_CLIENTS = ["claude-code", "codex", "cursor", "opencode", "vscode"] as const;
export type McpClient = (typeof MCP_CLIENTS)[number];

export function isMcpClient(name: string): name is McpClient {
  return (MCP_CLIENTS as readonly string[]).includes(name);
}

/** How to start `umbra mcp`: a program and its arguments (absolute paths of this installation). */
export interface Launch {
  command: string;
  args: string[];
}

export interface ClientConfig {
  /** What to run or paste. */
  text: string;
  /** Where it goes (for the user; printed apart from the text). */
  where: string;
}

/** A word for a POSIX shell: as it is when it is plain, else single-quoted. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

const NAME = "umbra";

export function clientConfig(client: McpClient, launch: Launch): ClientConfig {
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  switch (client) {
    case "claude-code":
      return {
        text: `claude mcp add ${NAME} -- ${[launch.command, ...launch.args].map(shellWord).join(" ")}\n`,
        where: "run this in your project (add --scope user before the name to have umbra in every project)",
      };
    case "codex":
      // TOML basic strings take JSON's escapes
      return {
        text: [
          `[mcp_servers.${NAME}]`,
          `command = ${JSON.stringify(launch.command)}`,
          `args = [${launch.args.map((arg) => JSON.stringify(arg)).join(", ")}]`,
          "",
        ].join("\n"),
        where: "add this to ~/.codex/config.toml",
      };
    case "cursor":
      return {
        text: json({ mcpServers: { [NAME]: { command: launch.command, args: launch.args } } }),
        where: "put this in .cursor/mcp.json in your project (or ~/.cursor/mcp.json for every project)",
      };
    case "opencode":
      return {
        text: json({
          $schema: "https://opencode.ai/config.json",
          mcp: { servers: { [NAME]: { type: "local", command: [launch.command, ...launch.args] } } },
        }),
        where:
          'merge this into opencode.json in your project (opencode V1 takes the "umbra" entry directly under "mcp", without "servers")',
      };
    case "vscode":
      return {
        text: json({
          servers: {
            [NAME]: {
              type: "stdio",
              command: launch.command,
              // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's variable, written as it is
              args: [...launch.args, "--root", "${workspaceFolder}"],
            },
          },
        }),
        where: "put this in .vscode/mcp.json in your project",
      };
  }
}
