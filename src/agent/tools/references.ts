import { navigate, positionSchema } from "./navigation.js";
import { defineTool } from "./types.js";

export const referencesTool = defineTool({
  name: "references",
  description:
    "Find references: every use of the symbol at a position, with its declaration (from the language server, on your branch's state). Give the file, the line and the symbol's name.",
  schema: positionSchema,
  run: (input, context) =>
    navigate(input, context, "reference(s)", async (host, path, position) =>
      host.references(await context.files(), path, position),
    ),
});
