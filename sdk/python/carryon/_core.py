"""What the sync and async clients share: a request's description, the retry policy, and reading
an answer (JSON, or the typed error of its problem)."""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from datetime import datetime, timezone
from typing import Any, Dict, Optional
from urllib.parse import quote

import httpx

from .errors import CarryonError, error_from_problem

#: statuses a request is retried on (with the same Idempotency-Key for a write)
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

#: the SDK's User-Agent
USER_AGENT = "carryon-python/0.1.0"


@dataclass
class Retry:
    """How requests are retried on network errors, 5xx, 429 and ``request_in_flight``: up to
    ``attempts`` tries in all, waiting ``backoff`` seconds doubled after each (at most
    ``max_backoff``, with jitter), or what ``Retry-After`` says (at most ``max_retry_after``)."""

    attempts: int = 8
    backoff: float = 0.1
    max_backoff: float = 3.0
    max_retry_after: float = 30.0

    def delay(self, attempt: int, retry_after: Optional[float]) -> float:
        """Seconds to wait before try number ``attempt + 1`` (``attempt`` counts from 1)."""
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_retry_after))
        d = min(self.backoff * 2.0 ** (attempt - 1), self.max_backoff)
        return d * (0.5 + random.random() / 2)


@dataclass
class Req:
    """One API call: method, path, query, JSON body, headers; whether it is a write that takes an
    Idempotency-Key (``key``) and whether it may be retried (``retry``)."""

    method: str
    path: str
    params: Dict[str, Any] = field(default_factory=dict)
    body: Any = None
    headers: Dict[str, str] = field(default_factory=dict)
    key: bool = False
    retry: bool = True
    #: the answer is a stream (the caller reads it)
    stream: bool = False

    def prepare(self) -> None:
        """Fixes the request's Idempotency-Key once, before the first try, so every retry of this
        logical write carries the same one."""
        if self.key and "Idempotency-Key" not in self.headers:
            self.headers["Idempotency-Key"] = "py-" + uuid.uuid4().hex

    def query(self) -> Dict[str, str]:
        """The query parameters that are set, as strings."""
        out: Dict[str, str] = {}
        for k, v in self.params.items():
            if v is None:
                continue
            out[k] = ("true" if v else "false") if isinstance(v, bool) else str(v)
        return out


def seg(s: Any) -> str:
    """One path segment, escaped."""
    return quote(str(s), safe="")


def write(method: str, path: str, body: Any = None, *, if_match: Optional[int] = None,
          request_id: Optional[str] = None, params: Optional[Dict[str, Any]] = None) -> Req:
    """A write with an Idempotency-Key (``request_id`` when given, else a new one) and, when
    ``if_match`` is set, ``If-Match: "N"``."""
    h: Dict[str, str] = {}
    if if_match is not None:
        h["If-Match"] = f'"{int(if_match)}"'
    if request_id is not None:
        h["Idempotency-Key"] = request_id
    if body is None and method == "POST":
        body = {}
    return Req(method, path, params or {}, body, h, key=True)


def read(path: str, **params: Any) -> Req:
    """A GET."""
    return Req("GET", path, params)


def drop_none(**kw: Any) -> Dict[str, Any]:
    """The keyword arguments that are not None: a JSON body of the optional fields given."""
    return {k: v for k, v in kw.items() if v is not None}


def retry_after(resp: httpx.Response) -> Optional[float]:
    """The answer's Retry-After in seconds (delta-seconds or an HTTP date), if any."""
    v = resp.headers.get("Retry-After")
    if not v:
        return None
    try:
        return float(v)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    return max(0.0, float((when - datetime.now(timezone.utc)).total_seconds()))


def problem_of(resp: httpx.Response) -> CarryonError:
    """The typed error of an error answer (its body read)."""
    try:
        doc = json.loads(resp.content) if resp.content else None
    except ValueError:
        doc = None
    fallback = resp.text[:200].strip() if resp.content and doc is None else ""
    return error_from_problem(resp.status_code, doc, retry_after(resp), resp.headers.get("X-Request-Id"), fallback)


def retryable(resp: httpx.Response) -> bool:
    """Whether an error answer is worth a retry (its body read)."""
    if resp.status_code in RETRY_STATUSES:
        return True
    if resp.status_code == 409:
        try:
            return bool(json.loads(resp.content).get("code") == "request_in_flight")
        except (ValueError, AttributeError):
            return False
    return False


def decode(resp: httpx.Response) -> Any:
    """The JSON of a successful answer (None for 204 or an empty body)."""
    if resp.status_code == 204 or not resp.content:
        return None
    return json.loads(resp.content)


def tool_output(value: Any) -> str:
    """A client tool's result as the text carryon takes: strings as they are, the rest as JSON."""
    return value if isinstance(value, str) else json.dumps(value)
