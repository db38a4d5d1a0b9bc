import { createHash } from "node:crypto";
import type { ContentKind } from "./types.js";

/** sha256 hex of some bytes (or of a string's UTF-8 encoding). */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** How many leading bytes are searched for a NUL byte, as git does. */
export const BINARY_SNIFF_BYTES = 8 * 1024;

/** Extensions of formats that are binary even when their first bytes happen to hold no NUL. */
export const BINARY_EXTENSIONS: ReadonlySet<string> = new Set([
  // images
  "png",
  "jpg",
  "jpeg",
  "gif",
  "bmp",
  "ico",
  "icns",
  "webp",
  "avif",
  "heic",
  "tif",
  "tiff",
  "psd",
  "xcf",
  // audio / video
  "mp3",
  "wav",
  "ogg",
  "flac",
  "aac",
  "m4a",
  "opus",
  "mp4",
  "m4v",
  "mov",
  "avi",
  "mkv",
  "webm",
  "wmv",
  // archives / compressed
  "zip",
  "gz",
  "tgz",
  "bz2",
  "xz",
  "zst",
  "lz4",
  "7z",
  "rar",
  "tar",
  "jar",
  "war",
  "ear",
  "apk",
  "aar",
  "whl",
  "egg",
  "nupkg",
  "deb",
  "rpm",
  "dmg",
  "iso",
  "cab",
  // executables, objects, libraries, bytecode
  "exe",
  "dll",
  "so",
  "dylib",
  "o",
  "obj",
  "a",
  "lib",
  "bin",
  "elf",
  "class",
  "pyc",
  "pyo",
  "pyd",
  "wasm",
  "node",
  "dex",
  // documents and fonts
  "pdf",
  "doc",
  "docx",
  "xls",
  "xlsx",
  "ppt",
  "pptx",
  "odt",
  "ods",
  "odp",
  "woff",
  "woff2",
  "ttf",
  "otf",
  "eot",
  // data
  "sqlite",
  "sqlite3",
  "db",
  "mdb",
  "parquet",
  "arrow",
  "feather",
  "npy",
  "npz",
  "pkl",
  "pickle",
  "h5",
  "hdf5",
  "onnx",
  "pt",
  "pth",
  "ckpt",
  "safetensors",
  "tflite",
  "pb",
]);

/** Whether a path's extension names a binary format (case-insensitive). */
export function hasBinaryExtension(path: string): boolean {
  const slash = path.lastIndexOf("/");
  const dot = path.lastIndexOf(".");
  if (dot <= slash + 1) return false; // no extension, or a dotfile such as `.bin`
  return BINARY_EXTENSIONS.has(path.slice(dot + 1).toLowerCase());
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Whether bytes are text worth chunking: "binary" when a NUL byte occurs in the first 8 KiB or `path`
 * (optional) has a binary extension; "invalid-utf8" when they do not decode as UTF-8; otherwise "text".
 */
export function classifyContent(bytes: Uint8Array, path?: string): ContentKind {
  if (path !== undefined && hasBinaryExtension(path)) return "binary";
  const sniff = bytes.subarray(0, BINARY_SNIFF_BYTES);
  if (sniff.indexOf(0) !== -1) return "binary";
  try {
    utf8.decode(bytes);
    return "text";
  } catch {
    return "invalid-utf8";
  }
}
