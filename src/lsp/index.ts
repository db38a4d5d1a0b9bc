export { introducedDiagnostics, type LineMap, lineMapping } from "./compare.js";
export { isLspError, LspError, type LspErrorCode } from "./errors.js";
export {
  DEFAULT_LSP_CONFIG,
  type LintOptions,
  LspHost,
  type LspHostOptions,
  type NavigationOptions,
  type ServerStatus,
} from "./host.js";
export { liveServerPids, spawnLauncher } from "./processes.js";
export {
  BUILTIN_LANGUAGES,
  C_CPP,
  GO,
  type LanguageDefinition,
  type LanguageMatch,
  PYTHON,
  Registry,
  type ServerSpec,
  TYPESCRIPT,
} from "./registry.js";
export type {
  Diag,
  DocumentSource,
  HoverResult,
  Launcher,
  LaunchSpec,
  LintResult,
  Location,
  Position,
  Severity,
  SymbolInfo,
} from "./types.js";
