"""Typed errors: every carryon refusal is an RFC 9457 problem whose ``code`` names the class."""

from __future__ import annotations

from typing import Any, Dict, Optional, Type

__all__ = [
    "CarryonError",
    "ConnectionFailed",
    "StreamBroken",
    "InvalidRequest",
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "MethodNotAllowed",
    "VersionConflict",
    "RequestInFlight",
    "SessionBusy",
    "SessionClosed",
    "Conflict",
    "RunFenced",
    "SessionExpired",
    "RequestTimeout",
    "PayloadTooLarge",
    "TooManyRequests",
    "UnsupportedMediaType",
    "IdempotencyKeyReused",
    "VersionRequired",
    "InternalError",
    "NotImplementedByServer",
    "Unavailable",
    "error_from_problem",
]


class CarryonError(Exception):
    """An answer of carryon that is an error: its status, problem ``code`` and the problem itself."""

    #: the problem code this class stands for ("" for the base class)
    code_name = ""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        problem: Optional[Dict[str, Any]] = None,
        retry_after: Optional[float] = None,
        request_id: Optional[str] = None,
    ) -> None:
        super().__init__(f"carryon: {status} {code}: {detail}")
        #: the HTTP status of the answer
        self.status = status
        #: the problem's ``code`` (``version_conflict``, ``not_found``, …)
        self.code = code
        #: the problem's ``detail``: what was wrong, in a sentence
        self.detail = detail
        #: the whole problem document (``title``, ``type``, ``instance`` and extensions)
        self.problem: Dict[str, Any] = problem or {}
        #: seconds the server asked to wait before a retry (``Retry-After``), if it said
        self.retry_after = retry_after
        #: the server's ``X-Request-Id`` of the answer, for its logs
        self.request_id = request_id

    @property
    def current_version(self) -> Optional[int]:
        """The session's (or item's) current version of a version conflict, else None."""
        v = self.problem.get("current_version")
        return v if isinstance(v, int) else None

    @property
    def active_run_id(self) -> Optional[str]:
        """The run that keeps a session busy (``session_busy``), else None."""
        v = self.problem.get("active_run_id")
        return v if isinstance(v, str) else None


class ConnectionFailed(CarryonError):
    """The server could not be reached (or the connection broke) on every attempt."""

    code_name = "connection_failed"


class StreamBroken(CarryonError):
    """An event stream broke more times in a row than the client retries."""

    code_name = "stream_broken"


class InvalidRequest(CarryonError):
    """400: the input is malformed or breaks a rule."""

    code_name = "invalid_request"


class Unauthorized(CarryonError):
    """401: no key, or an unknown or revoked key."""

    code_name = "unauthorized"


class Forbidden(CarryonError):
    """403: an admin route called without an admin key."""

    code_name = "forbidden"


class NotFound(CarryonError):
    """404: missing, or someone else's."""

    code_name = "not_found"


class MethodNotAllowed(CarryonError):
    """405: the path exists with other methods."""

    code_name = "method_not_allowed"


class VersionConflict(CarryonError):
    """409/412: the expected version is stale; see current_version."""

    code_name = "version_conflict"


class RequestInFlight(CarryonError):
    """409: the same request id is still being processed."""

    code_name = "request_in_flight"


class SessionBusy(CarryonError):
    """409: the session has an active run (active_run_id)."""

    code_name = "session_busy"


class SessionClosed(CarryonError):
    """409: the session is closed; restore it to write."""

    code_name = "session_closed"


class Conflict(CarryonError):
    """409: the write conflicts with the current state."""

    code_name = "conflict"


class RunFenced(CarryonError):
    """409: a runner wrote for a run another runner took over."""

    code_name = "run_fenced"


class SessionExpired(CarryonError):
    """410: the session was idle past its TTL; restore it to write."""

    code_name = "session_expired"


class RequestTimeout(CarryonError):
    """408: the request body did not arrive in time."""

    code_name = "request_timeout"


class PayloadTooLarge(CarryonError):
    """413: the body is over the limit."""

    code_name = "payload_too_large"


class TooManyRequests(CarryonError):
    """429: too many requests or streams in flight."""

    code_name = "too_many_requests"


class UnsupportedMediaType(CarryonError):
    """415: the body is not JSON."""

    code_name = "unsupported_media_type"


class IdempotencyKeyReused(CarryonError):
    """422: the request id was used for another request."""

    code_name = "idempotency_key_reused"


class VersionRequired(CarryonError):
    """428: the server requires an expected version on writes."""

    code_name = "version_required"


class InternalError(CarryonError):
    """500: a bug; the server logged it with the request id."""

    code_name = "internal"


class NotImplementedByServer(CarryonError):
    """501: the server runs without that part."""

    code_name = "not_implemented"


class Unavailable(CarryonError):
    """503: the server is not ready."""

    code_name = "unavailable"


_BY_CODE: Dict[str, Type[CarryonError]] = {
    c.code_name: c
    for c in (
        InvalidRequest, Unauthorized, Forbidden, NotFound, MethodNotAllowed, VersionConflict,
        RequestInFlight, SessionBusy, SessionClosed, Conflict, RunFenced, SessionExpired,
        RequestTimeout, PayloadTooLarge, TooManyRequests, UnsupportedMediaType,
        IdempotencyKeyReused, VersionRequired, InternalError, NotImplementedByServer, Unavailable,
    )
}


def error_from_problem(
    status: int,
    problem: Any,
    retry_after: Optional[float] = None,
    request_id: Optional[str] = None,
    fallback: str = "",
) -> CarryonError:
    """The typed error of a problem document (or of a bare status when the body is not one)."""
    if not isinstance(problem, dict):
        problem = {}
    code = problem.get("code")
    if not isinstance(code, str) or not code:
        code = f"http_{status}"
    detail = problem.get("detail") or problem.get("title") or fallback or f"HTTP {status}"
    cls = _BY_CODE.get(code, CarryonError)
    return cls(status, code, str(detail), problem, retry_after, request_id)
