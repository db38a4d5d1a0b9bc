export type ShadowErrorCode =
  /** native/build/umbra-helper is missing: `npm run build` was not run. */
  | "HELPER_NOT_BUILT"
  /** The workspace folder does not exist or is not a folder. */
  | "WORKSPACE_MISSING"
  /** A copy-up failed with EOVERFLOW: a file's owner or group is not mapped in the user namespace. */
  | "UNMAPPED_OWNER"
  /** No way of making a branch works on this machine, or the configured one does not. */
  | "NO_MODE"
  | "BRANCH_NOT_FOUND"
  /** branch.json cannot be read or parsed; the branch is stale and can be removed. */
  | "CORRUPT_BRANCH"
  /** A workspace-relative path is absolute or leaves the workspace. */
  | "PATH_ESCAPE"
  /** The native helper could not mount the branch or enter its namespaces. */
  | "MOUNT_FAILED"
  /** The data directory lies inside the workspace, which a branch cannot be mounted over. */
  | "DATA_DIR_INSIDE_WORKSPACE"
  /** Copy modes: copying the workspace into the branch failed. */
  | "COPY_FAILED"
  /** A write to the user's own folder through the read-only door (src/shadow/user-folder.ts). */
  | "READ_ONLY";

/** A shadow-branch failure. The message is one line, fit to show to a user. */
export class ShadowError extends Error {
  override readonly name = "ShadowError";
  readonly code: ShadowErrorCode;

  constructor(code: ShadowErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** The `code` of a Node.js system error, if it has one. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}

/** The one-line explanation of an EOVERFLOW met while writing `what` through a rootless branch. */
export function unmappedOwnerMessage(what: string): string {
  return (
    `cannot write ${what} in the branch: EOVERFLOW, the file's owner or group is not mapped in the ` +
    "branch's user namespace (rootless overlayfs cannot copy it up); give the file to your own user, " +
    "or set shadow.mode to reflink or copy"
  );
}
