// Errors of the carryon client: an answer with an RFC 9457 problem becomes a CarryonError that
// carries carryon's problem code; a server that could not be reached becomes a ConnectionError.
import type { components } from "./openapi.js";

/** A problem+json answer of carryon, as its OpenAPI document describes it. */
export type Problem = components["schemas"]["Problem"];

/** The codes of carryon's problems (docs/API.md, "Errors"). */
export type ProblemCode = Problem["code"];

/** CarryonError is an answer of carryon with an error status: its problem's code and detail. */
export class CarryonError extends Error {
  /** The HTTP status of the answer. */
  readonly status: number;
  /** carryon's problem code, such as "version_conflict" or "not_found". */
  readonly code: ProblemCode;
  /** The problem's detail: what was wrong, in a sentence. */
  readonly detail: string;
  /** The session's current version, on a version conflict (409 or 412). */
  readonly currentVersion?: number;
  /** The run that keeps a session busy, on session_busy. */
  readonly activeRunId?: string;
  /** Seconds the server asked to wait before a retry (Retry-After), when it said. */
  readonly retryAfter?: number;
  /** The X-Request-Id of the answer, which names the server's log line. */
  readonly requestId?: string;
  /** The whole problem as the server sent it. */
  readonly problem: Problem;

  constructor(problem: Problem, init: { retryAfter?: number; requestId?: string } = {}) {
    super(`carryon: ${problem.status} ${problem.code}: ${problem.detail}`);
    this.name = "CarryonError";
    this.status = problem.status;
    this.code = problem.code;
    this.detail = problem.detail;
    this.currentVersion = problem.current_version;
    this.activeRunId = problem.active_run_id;
    this.retryAfter = init.retryAfter;
    this.requestId = init.requestId;
    this.problem = problem;
  }

  /** True for a stale expected version or If-Match: re-read and try again. */
  get isVersionConflict(): boolean {
    return this.code === "version_conflict";
  }
}

/** ConnectionError is a request that got no answer from carryon, after the client's retries. */
export class ConnectionError extends Error {
  /** How many times the request was sent. */
  readonly attempts: number;

  constructor(message: string, attempts: number, cause: unknown) {
    super(message, { cause });
    this.name = "ConnectionError";
    this.attempts = attempts;
  }
}

/** isCarryonError tells whether err is a CarryonError, with that code when one is given. */
export function isCarryonError(err: unknown, code?: ProblemCode): err is CarryonError {
  return err instanceof CarryonError && (code === undefined || err.code === code);
}
