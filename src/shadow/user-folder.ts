import { ShadowError } from "./errors.js";
import { type AccessRules, BranchFiles } from "./files.js";
import { BranchView } from "./view.js";

/**
 * The file door on the user's own folder, read-only: the same resolution and refusals as a branch's
 * (links followed only inside the workspace, hidden paths and non-regular files refused), over a view
 * with nothing above the user's folder. Every write, deletion and rename is refused before any I/O.
 * `emptyDir` is an empty folder of umbra's (the view's unused upper layer; it is only ever looked in).
 */
export function userFolderFiles(root: string, rules: AccessRules, emptyDir: string): BranchFiles {
  const readOnly = (): never => {
    throw new ShadowError("READ_ONLY", "the user's folder is read-only here: make a branch and edit there");
  };
  const writes = {
    id: "user-folder",
    workspaceRoot: root,
    write: readOnly,
    remove: readOnly,
    recordBase: async () => readOnly(),
    noteSeen: async () => {},
    changes: async () => [],
  };
  const view = new BranchView({ root, mode: "overlay", upper: emptyDir, tree: emptyDir }, new Map());
  return new BranchFiles(writes, view, rules);
}
