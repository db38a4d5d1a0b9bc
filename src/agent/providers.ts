import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError, type LanguageModel } from "ai";
import type { AgentConfig } from "../config/config.js";

/** The model a session talks to, resolved from the configuration and the environment. */
export interface ModelSpec {
  provider: "openai-compatible" | "anthropic";
  baseUrl: string | undefined;
  model: string;
  apiKey: string | undefined;
}

/** The model is not configured well enough to be called (exit status 2). */
export class ModelConfigError extends Error {
  override name = "ConfigError";
}

export type FetchFunction = typeof globalThis.fetch;

/**
 * Which model to use: `agent.provider`, `agent.baseUrl`, `agent.model` (the environment's
 * UMBRA_MODEL_BASE_URL and UMBRA_MODEL are already merged into the configuration), and the key from the
 * variable named by `agent.apiKeyEnv` (default UMBRA_MODEL_API_KEY; ANTHROPIC_API_KEY for Anthropic).
 * `fallback` fills what the configuration lacks (a cassette's recorded model, for replay).
 */
export function resolveModelSpec(
  config: Pick<AgentConfig, "provider" | "baseUrl" | "model" | "apiKeyEnv">,
  env: NodeJS.ProcessEnv = process.env,
  fallback: Partial<ModelSpec> = {},
): ModelSpec {
  const provider = fallback.provider && !config.baseUrl ? fallback.provider : config.provider;
  const model = config.model ?? fallback.model;
  const baseUrl = config.baseUrl ?? fallback.baseUrl;
  const keyEnv = config.apiKeyEnv ?? (provider === "anthropic" ? "ANTHROPIC_API_KEY" : "UMBRA_MODEL_API_KEY");
  const apiKey = env[keyEnv] || (provider === "anthropic" ? env.ANTHROPIC_API_KEY : undefined) || undefined;
  if (!model) {
    throw new ModelConfigError(
      "no model configured: set agent.model in .umbra/config.json or UMBRA_MODEL (and UMBRA_MODEL_BASE_URL for an OpenAI-compatible endpoint)",
    );
  }
  if (provider === "openai-compatible" && !baseUrl) {
    throw new ModelConfigError(
      "no endpoint configured: set agent.baseUrl or UMBRA_MODEL_BASE_URL (e.g. http://127.0.0.1:11434/v1)",
    );
  }
  if (provider === "anthropic" && !apiKey && !fallback.provider) {
    throw new ModelConfigError(`no API key for Anthropic: set ${keyEnv}`);
  }
  return { provider, baseUrl, model, apiKey };
}

/** The AI SDK model for a spec; `fetch` replaces the network (cassettes, tests). */
export function createModel(spec: ModelSpec, fetch?: FetchFunction): LanguageModel {
  if (spec.provider === "anthropic") {
    const anthropic = createAnthropic({
      apiKey: spec.apiKey ?? "replay",
      ...(spec.baseUrl ? { baseURL: spec.baseUrl } : {}),
      ...(fetch ? { fetch } : {}),
    });
    return anthropic(spec.model);
  }
  const provider = createOpenAICompatible({
    name: "umbra",
    baseURL: spec.baseUrl ?? "http://127.0.0.1/v1",
    ...(spec.apiKey ? { apiKey: spec.apiKey } : {}),
    includeUsage: true,
    ...(fetch ? { fetch } : {}),
  });
  return provider.chatModel(spec.model);
}

/** A model call that timed out (no answer, or a stream that stalled, within the time allowed). */
export class ModelTimeoutError extends Error {
  override name = "ModelTimeoutError";
}

function statusOf(error: unknown): number | undefined {
  if (APICallError.isInstance(error)) return error.statusCode;
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return cause && cause !== error ? statusOf(cause) : undefined;
}

/** Whether a failed model call is worth retrying: 408, 409, 429, 5xx, a time-out, a broken connection. */
export function isRetryable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as Error).name === "CassetteError") return false;
  }
  const status = statusOf(error);
  // a 2xx "error" is a streamed answer that broke off in the middle
  if (status !== undefined && status >= 200 && status < 300) return true;
  if (status !== undefined) return status === 408 || status === 409 || status === 429 || status >= 500;
  if (error instanceof ModelTimeoutError) return true;
  if (APICallError.isInstance(error)) return error.isRetryable;
  const text = `${(error as Error)?.name ?? ""} ${(error as Error)?.message ?? ""} ${String((error as { cause?: unknown })?.cause ?? "")}`;
  return /terminated|socket|ECONNRESET|ECONNREFUSED|EPIPE|fetch failed|network|aborted|premature/i.test(text);
}

/** Seconds the server asked to wait (Retry-After), if it did. */
function retryAfterMs(error: unknown): number | undefined {
  if (!APICallError.isInstance(error)) return undefined;
  const header = error.responseHeaders?.["retry-after"];
  if (header === undefined) return undefined;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/** Exponential backoff with jitter (attempt 1, 2, …), at least what Retry-After asks, at most 60 s. */
export function backoffMs(attempt: number, error: unknown, baseMs: number): number {
  const exponential = baseMs * 2 ** (attempt - 1);
  const jittered = exponential * (0.75 + Math.random() * 0.5);
  return Math.min(60_000, Math.max(retryAfterMs(error) ?? 0, jittered));
}

/** A short description of a model-call failure. */
export function describeModelError(error: unknown): string {
  const status = statusOf(error);
  const message = error instanceof Error ? error.message : String(error);
  if (status !== undefined && status >= 200 && status < 300) {
    const cause = (error as { cause?: unknown }).cause;
    return `the streamed answer broke off${cause instanceof Error ? ` (${cause.message.split("\n")[0]})` : ""}`;
  }
  return status !== undefined ? `HTTP ${status}: ${message.split("\n")[0]}` : (message.split("\n")[0] ?? "");
}
