/**
 * What a branch changed, each path with the content it started from (its recorded base) and the content
 * it holds now. The accept (src/accept) merges these three ways with the user's current folder; the
 * branch records them (src/shadow/base.ts).
 */

/** What a path holds: nothing, a regular file, or a symbolic link. */
export type FileState =
  | { kind: "absent" }
  | {
      kind: "file";
      mode: "100644" | "100755";
      size: number;
      /** The bytes (read on demand: a file may be large). */
      load(): Promise<Buffer>;
    }
  | { kind: "link"; target: string };

/** A base umbra could not record exactly (the user changed the file while a command was copying it). */
export interface UnknownBase {
  kind: "unknown";
  /** One line, for the user: why the base is not known. */
  why: string;
}

export type BaseState = FileState | UnknownBase;

/** A path the branch changed. */
export interface RecordedChange {
  path: string;
  /** The user's content when the branch first touched the path (absent: the branch created it). */
  base: BaseState;
  /** What the branch holds now (absent: the branch deleted it). */
  branch: FileState;
}
