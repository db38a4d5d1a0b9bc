import { EngineError, type EngineErrorCode } from "../engine/errors.js";

/**
 * The HTTP API's one error type: an HTTP status and a code, sent as `{error: {code, message}}`. Engine
 * failures keep their EngineError code; the front end's own refusals (no token, a foreign Host) add theirs.
 */
export type HttpErrorCode =
  | EngineErrorCode
  /** No credential, or a wrong one. */
  | "UNAUTHORIZED"
  /** A foreign Host or Origin, a missing CSRF header, a call the bearer token may not make. */
  | "FORBIDDEN"
  | "METHOD_NOT_ALLOWED"
  | "TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: HttpErrorCode,
    message: string,
  ) {
    super(message.split("\n")[0] ?? message);
    this.name = "HttpError";
  }

  toBody(): { error: { code: HttpErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

/** The HTTP status of each engine error code. */
export const ENGINE_STATUS: Record<EngineErrorCode, number> = {
  BAD_REQUEST: 400,
  REFUSED: 403,
  NOT_FOUND: 404,
  BUSY: 409,
  STALE: 409,
  // the client went away (nginx's "client closed request"): nobody reads this answer
  CANCELLED: 499,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  NO_ENGINE: 503,
};

/** The HttpError a failure stands for (anything but an HttpError or EngineError is INTERNAL). */
export function httpErrorOf(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof EngineError)
    return new HttpError(ENGINE_STATUS[error.code], error.code, error.message);
  return new HttpError(500, "INTERNAL", error instanceof Error ? error.message : String(error));
}
