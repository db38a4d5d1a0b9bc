/**
 * The part of better-sqlite3's API the embedding cache uses, typed locally so this module compiles
 * whether or not `@types/better-sqlite3` is installed. The native module is loaded with `require`
 * (better-sqlite3 is CommonJS).
 */
import { createRequire } from "node:module";

export interface SqliteRunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

export interface SqliteStatement {
  run(...params: unknown[]): SqliteRunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

export interface SqliteTransaction<A extends unknown[], R> {
  (...args: A): R;
  immediate(...args: A): R;
  deferred(...args: A): R;
  exclusive(...args: A): R;
}

export interface SqliteDatabase {
  readonly open: boolean;
  prepare(sql: string): SqliteStatement;
  exec(sql: string): SqliteDatabase;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): SqliteTransaction<A, R>;
  close(): SqliteDatabase;
}

export interface SqliteOpenOptions {
  readonly?: boolean;
  fileMustExist?: boolean;
  /** Busy timeout in milliseconds. */
  timeout?: number;
}

export type SqliteDatabaseConstructor = new (filename: string, options?: SqliteOpenOptions) => SqliteDatabase;

let constructorCache: SqliteDatabaseConstructor | undefined;

/** The better-sqlite3 `Database` class. */
export function sqliteDatabase(): SqliteDatabaseConstructor {
  if (!constructorCache) {
    const require = createRequire(import.meta.url);
    constructorCache = require("better-sqlite3") as SqliteDatabaseConstructor;
  }
  return constructorCache;
}

/** The SQLite result code carried by a better-sqlite3 error (`SQLITE_CORRUPT`, `SQLITE_BUSY`, ...). */
export function sqliteErrorCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}

/** True for errors that mean the database file itself is damaged or is not a database. */
export function isCorruptionError(error: unknown): boolean {
  const code = sqliteErrorCode(error);
  if (code?.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") return true;
  const message = error instanceof Error ? error.message : "";
  return /file is not a database|database disk image is malformed/i.test(message);
}
