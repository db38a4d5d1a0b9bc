import { join } from "node:path";

/** Where one workspace's index state lives inside its data directory. */
export interface IndexLayout {
  dir: string;
  merkle: string;
  lexical: string;
  vectors: string;
  secret: string;
  codeModel: string;
  lock: string;
}

export function indexLayout(workspaceDir: string): IndexLayout {
  return {
    dir: workspaceDir,
    merkle: join(workspaceDir, "merkle.json"),
    lexical: join(workspaceDir, "index", "lexical.sqlite"),
    vectors: join(workspaceDir, "index", "vectors"),
    secret: join(workspaceDir, "secret.key"),
    codeModel: join(workspaceDir, "index", "code-model.bin"),
    lock: join(workspaceDir, "index.lock"),
  };
}
