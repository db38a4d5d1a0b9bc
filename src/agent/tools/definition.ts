import { navigate, positionSchema } from "./navigation.js";
import { defineTool } from "./types.js";

export const definitionTool = defineTool({
  name: "definition",
  description:
    "Go to definition: where the symbol at a position is defined (from the language server, on your branch's state). Give the file, the line and the symbol's name.",
  schema: positionSchema,
  run: (input, context) =>
    navigate(input, context, "definition(s)", async (host, path, position) =>
      host.definition(await context.files(), path, position),
    ),
});
