import { describe, expect, it } from "vitest";
import { clientConfig, MCP_CLIENTS, shellWord } from "../../src/mcp/client-config.js";
import { CLI, requireBuiltCli, umbraSync } from "../helpers/cli.js";

const launch = { command: "/opt/node 20/bin/node", args: ["/srv/umbra/dist/cli/main.js", "mcp"] };

describe("umbra mcp --print-config", () => {
  it("writes each client's own format", () => {
    expect(clientConfig("claude-code", launch).text).toBe(
      "claude mcp add umbra -- '/opt/node 20/bin/node' /srv/umbra/dist/cli/main.js mcp\n",
    );
    expect(clientConfig("codex", launch).text).toBe(
      '[mcp_servers.umbra]\ncommand = "/opt/node 20/bin/node"\nargs = ["/srv/umbra/dist/cli/main.js", "mcp"]\n',
    );
    expect(JSON.parse(clientConfig("cursor", launch).text)).toEqual({
      mcpServers: { umbra: { command: launch.command, args: launch.args } },
    });
    expect(JSON.parse(clientConfig("opencode", launch).text)).toEqual({
      $schema: "https://opencode.ai/config.json",
      mcp: { servers: { umbra: { type: "local", command: [launch.command, ...launch.args] } } },
    });
    expect(JSON.parse(clientConfig("vscode", launch).text)).toEqual({
      servers: {
        umbra: {
          type: "stdio",
          command: launch.command,
          // biome-ignore lint/suspicious/noTemplateCurlyInString: VS Code's variable, as the file holds it
          args: [...launch.args, "--root", "${workspaceFolder}"],
        },
      },
    });
    for (const client of MCP_CLIENTS) expect(clientConfig(client, launch).where).toMatch(/\S/);
  });

  it("quotes words for the shell", () => {
    expect(shellWord("/a/b-c.js")).toBe("/a/b-c.js");
    expect(shellWord("it's")).toBe("'it'\\''s'");
    expect(shellWord("$(id)")).toBe("'$(id)'");
  });

  it("prints this installation's command, and refuses an unknown client", () => {
    requireBuiltCli();
    const printed = umbraSync(process.env, ["mcp", "--print-config", "cursor"]);
    expect(printed.code).toBe(0);
    expect(JSON.parse(printed.stdout)).toEqual({
      mcpServers: { umbra: { command: process.execPath, args: [CLI, "mcp"] } },
    });
    expect(printed.stderr).toMatch(/\.cursor\/mcp\.json/);
    const unknown = umbraSync(process.env, ["mcp", "--print-config", "emacs"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /unknown client emacs: one of claude-code, codex, cursor, opencode, vscode/,
    );
  });
});
