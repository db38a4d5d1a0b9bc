export { runTests, type TestRun } from "./apply.js";
export {
  type Cassette,
  CassetteError,
  type CassetteExchange,
  type CassetteHeader,
  readCassette,
  recordingFetch,
  replayFetch,
} from "./cassette.js";
export { type AgentContext, createToolContext } from "./context.js";
export {
  type AgentEvent,
  type AgentLimits,
  type AgentOutcome,
  type AgentStatus,
  compactMessages,
  runAgent,
  systemPrompt,
} from "./loop.js";
export {
  createModel,
  type FetchFunction,
  ModelConfigError,
  type ModelSpec,
  resolveModelSpec,
} from "./providers.js";
export { runSession, type SessionOptions, type SessionResult } from "./run.js";
export { listSessions, newSessionId, type SessionSummary, SessionWriter, sessionsDir } from "./session.js";
export { ALL_TOOLS } from "./tools/index.js";
export { formatUsage, sumUsage, type Usage } from "./usage.js";
