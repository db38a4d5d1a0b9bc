import { errorCode } from "../workspace/errors.js";

/** True for SQLite errors that mean the database file itself is damaged or is not a database. */
export function isCorruptionError(error: unknown): boolean {
  const code = errorCode(error);
  if (code?.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") return true;
  const message = error instanceof Error ? error.message : "";
  return /file is not a database|database disk image is malformed/i.test(message);
}
