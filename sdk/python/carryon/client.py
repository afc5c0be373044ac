"""The synchronous client: ``Carryon(base_url, api_key)``."""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, TypeVar, Union, cast

import httpx

from . import _api as api
from ._core import USER_AGENT, Req, Retry, decode, problem_of, retry_after, retryable, tool_output
from ._sse import FrameParser, Tracker
from .errors import CarryonError, Conflict, ConnectionFailed, StreamBroken, VersionConflict
from .types import Event, Memory, Message, Run, Session, ToolCall

T = TypeVar("T")

#: the default timeouts: a stream's read timeout is longer than the server's 15 s keepalive
TIMEOUT = httpx.Timeout(60.0, connect=10.0)
STREAM_TIMEOUT = httpx.Timeout(45.0, connect=10.0)

#: what an approval callback may answer: True approves, a dict approves with these arguments,
#: False or None rejects, a string rejects with that reason
Decision = Union[bool, None, str, Mapping[str, Any]]


def settings(base_url: Optional[str], api_key: Optional[str]) -> tuple[str, str]:
    """The server's URL and the key: the arguments, else $CARRYON_SERVER and $CARRYON_KEY."""
    url = base_url or os.environ.get("CARRYON_SERVER") or "http://127.0.0.1:8420"
    key = api_key or os.environ.get("CARRYON_KEY") or ""
    return url.rstrip("/"), key


class Carryon:
    """A client of one carryon server. Every write carries an Idempotency-Key (a new one per call,
    or ``request_id=``) and is retried with that same key on network errors, 5xx, 429 and
    ``request_in_flight``, honouring ``Retry-After``; every error is a typed ``CarryonError``.

    ``base_url`` defaults to ``$CARRYON_SERVER`` (else ``http://127.0.0.1:8420``), ``api_key`` to
    ``$CARRYON_KEY``. ``http_client`` is an ``httpx.Client`` of your own (proxies, transports,
    event hooks): the client sets its base URL and its Authorization header. Use it as a context
    manager, or call ``close()``."""

    def __init__(self, base_url: Optional[str] = None, api_key: Optional[str] = None, *,
                 retry: Optional[Retry] = None, stream_retries: int = 20,
                 http_client: Optional[httpx.Client] = None) -> None:
        url, key = settings(base_url, api_key)
        self.retry = retry or Retry()
        #: how many times in a row an event stream reconnects before it gives up
        self.stream_retries = stream_retries
        headers = {"User-Agent": USER_AGENT, "Authorization": "Bearer " + key}
        self._http = http_client or httpx.Client(timeout=TIMEOUT)
        self._http.base_url = httpx.URL(url)
        self._http.headers.update(headers)
        self.sessions = Sessions(self)
        self.messages = Messages(self)
        self.memory = WorkingMemory(self)
        self.runs = Runs(self)
        self.memories = LongTermMemory(self)
        self.users = Users(self)

    def __enter__(self) -> "Carryon":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connections."""
        self._http.close()

    # Transport

    def send(self, req: Req) -> httpx.Response:
        """Sends one request, with the retries the request allows; raises the typed error of a
        refusal. Every try of one call carries the same Idempotency-Key."""
        req.prepare()
        attempt = 0
        while True:
            attempt += 1
            try:
                resp = self._http.request(req.method, req.path, params=req.query(), json=req.body, headers=req.headers)
            except httpx.TransportError as e:
                if not req.retry or attempt >= self.retry.attempts:
                    raise ConnectionFailed(0, "connection_failed", f"{req.method} {req.path}: {e!r} after {attempt} tries") from e
                time.sleep(self.retry.delay(attempt, None))
                continue
            if resp.status_code < 400:
                return resp
            if req.retry and attempt < self.retry.attempts and retryable(resp):
                time.sleep(self.retry.delay(attempt, retry_after(resp)))
                continue
            raise problem_of(resp)

    def call(self, req: Req) -> Any:
        """Sends one request and answers its JSON (None for 204)."""
        return decode(self.send(req))

    def pages(self, req: Req, *, cursor_in_body: bool = False) -> Iterator[Dict[str, Any]]:
        """Every item of a listing, fetching the next page only when the one before is used up."""
        cursor: Optional[str] = None
        while True:
            r = Req(req.method, req.path, dict(req.params), dict(req.body) if isinstance(req.body, dict) else req.body,
                    dict(req.headers), req.key, req.retry)
            if cursor is not None:
                if cursor_in_body:
                    r.body["cursor"] = cursor
                else:
                    r.params["cursor"] = cursor
            page = self.call(r)
            yield from page.get("items") or []
            cursor = page.get("next_cursor")
            if not cursor:
                return

    # The seed's short path and the agent loop

    def chat(self, message: str, *, session_id: Optional[str] = None, agent: Optional[str] = None,
             tools: Optional[Sequence[Mapping[str, Any]]] = None, if_match: Optional[int] = None,
             request_id: Optional[str] = None) -> Dict[str, Any]:
        """``POST /v1/chat``: one turn, answered when the run ends (``session_id``, ``run_id``,
        ``status``, ``reply``, ``working_memory``). Without ``session_id`` it makes a session."""
        return cast(Dict[str, Any], self.call(api.chat(message, session_id, agent, tools, if_match, request_id)))

    def run(self, session_id: str, message: str, *, tools: Optional[Sequence[Mapping[str, Any]]] = None,
            on_tool_call: Optional[Callable[[ToolCall], Any]] = None,
            on_approval: Optional[Callable[[Dict[str, Any]], Decision]] = None,
            on_event: Optional[Callable[[Event], None]] = None, **start: Any) -> Run:
        """Starts a run and follows it to its end (see ``Runs.wait``): client tools are run by
        ``on_tool_call`` and their outputs posted, approvals decided by ``on_approval``."""
        run = self.runs.start(session_id, message, tools=tools, **start)
        return self.runs.wait(run["id"], on_tool_call=on_tool_call, on_approval=on_approval, on_event=on_event)

    def create_session(self, **kw: Any) -> Session:
        """The seed's synonym of ``sessions.create``."""
        return self.sessions.create(**kw)

    def get_session(self, session_id: str, messages: Optional[int] = None) -> Session:
        """The seed's synonym of ``sessions.get``."""
        return self.sessions.get(session_id, messages)

    def me(self) -> Dict[str, Any]:
        """The caller: ``{id, name, admin, created_at}``."""
        return cast(Dict[str, Any], self.call(api.me()))


class _Part:
    def __init__(self, c: Carryon) -> None:
        self._c = c


class Sessions(_Part):
    """Sessions: create, get, list, patch, close, restore, delete, fork, and the If-Match helpers."""

    def create(self, *, title: Optional[str] = None, metadata: Optional[Mapping[str, Any]] = None,
               working_memory: Optional[Mapping[str, Any]] = None, messages: Optional[api.Messages] = None,
               agent: Optional[str] = None, external_id: Optional[str] = None, if_exists: Optional[str] = None,
               idle_ttl_seconds: Optional[int] = None, request_id: Optional[str] = None,
               budget: Optional[Mapping[str, Any]] = None) -> Session:
        """Makes a session (or, with an ``external_id`` in use, answers that one); ``budget``
        (``{tokens?, usd?, on_exceed?}``) limits what its runs spend."""
        return cast(Session, self._c.call(api.create_session(
            title=title, metadata=metadata, working_memory=working_memory, messages=messages, agent=agent,
            external_id=external_id, if_exists=if_exists, idle_ttl_seconds=idle_ttl_seconds, request_id=request_id,
            budget=budget)))

    def get(self, session_id: str, messages: Optional[int] = None) -> Session:
        """The session with its working memory and its last ``messages`` (default 20)."""
        return cast(Session, self._c.call(api.get_session(session_id, messages)))

    def list(self, *, status: Optional[str] = None, external_id: Optional[str] = None,
             page_size: Optional[int] = None) -> Iterator[Session]:
        """Every session of the caller, newest first, page by page as the iterator goes."""
        return cast(Iterator[Session], self._c.pages(api.list_sessions(status, external_id, page_size)))

    def patch(self, session_id: str, *, title: Optional[str] = None, metadata: Optional[Mapping[str, Any]] = None,
              idle_ttl_seconds: Optional[int] = None, if_match: Optional[int] = None,
              request_id: Optional[str] = None, budget: Optional[Mapping[str, Any]] = None) -> Session:
        """Changes the title, metadata (replaced whole), idle TTL or budget (``{}`` removes it)."""
        return cast(Session, self._c.call(api.patch_session(session_id, title=title, metadata=metadata,
                                                            idle_ttl_seconds=idle_ttl_seconds, if_match=if_match,
                                                            request_id=request_id, budget=budget)))

    def close(self, session_id: str, *, if_match: Optional[int] = None, request_id: Optional[str] = None) -> Session:
        """Closes the session: history kept, writes refused until ``restore``."""
        return cast(Session, self._c.call(api.session_action(session_id, "close", if_match, request_id)))

    def restore(self, session_id: str, *, if_match: Optional[int] = None, request_id: Optional[str] = None) -> Session:
        """Reopens a closed or expired session."""
        return cast(Session, self._c.call(api.session_action(session_id, "restore", if_match, request_id)))

    def delete(self, session_id: str, *, if_match: Optional[int] = None, request_id: Optional[str] = None) -> None:
        """Deletes the session and everything in it."""
        self._c.call(api.delete_session(session_id, if_match, request_id))

    def fork(self, session_id: str, *, at_version: Optional[int] = None, title: Optional[str] = None,
             if_match: Optional[int] = None, request_id: Optional[str] = None) -> Session:
        """A copy-on-write fork of the session as it was at ``at_version`` (default: now)."""
        return cast(Session, self._c.call(api.fork_session(session_id, at_version, title, if_match, request_id)))

    def usage(self, session_id: str, *, days: Optional[int] = None) -> Dict[str, Any]:
        """What the session's runs spent: ``{session_id, spend, models, days, budget?}``, ``days``
        the last ``days`` UTC days (default 30, zeros included)."""
        return cast(Dict[str, Any], self._c.call(api.session_usage(session_id, days)))

    def context(self, session_id: str) -> Dict[str, Any]:
        """What the model would be sent now, with tokens per part."""
        return cast(Dict[str, Any], self._c.call(api.context(session_id)))

    def update(self, session_id: str, fn: Callable[[Session], Optional[Mapping[str, Any]]], *,
               attempts: int = 10) -> Memory:
        """Read-modify-write of the working memory: ``fn`` gets the session as it is now (with its
        ``working_memory`` and ``version``) and answers a JSON Merge Patch (or None: nothing to
        change). The patch is written with ``If-Match`` at the version read; when someone else
        wrote in between (412/409), the session is read again and ``fn`` applied again."""
        return self.with_version(session_id, lambda s: self._patch_or_read(s, fn(s)), attempts=attempts)

    def _patch_or_read(self, s: Session, patch: Optional[Mapping[str, Any]]) -> Memory:
        if patch is None:
            return self._c.memory.get(s["id"])
        return self._c.memory.patch(s["id"], patch, if_match=s["version"])

    def with_version(self, session_id: str, fn: Callable[[Session], T], *, attempts: int = 10) -> T:
        """Calls ``fn`` with the session as it is now; ``fn`` writes with ``if_match=s["version"]``.
        On a version conflict the session is read again and ``fn`` called again (each time a new
        logical write, with a new Idempotency-Key), up to ``attempts`` times."""
        for i in range(attempts):
            s = self.get(session_id, messages=0)
            try:
                return fn(s)
            except VersionConflict:
                if i == attempts - 1:
                    raise
        raise AssertionError("unreachable")


class Messages(_Part):
    """A session's messages: append, list, delete."""

    def append(self, session_id: str, messages: api.Messages, *, if_match: Optional[int] = None,
               request_id: Optional[str] = None) -> Dict[str, Any]:
        """Appends messages (a string is one user message): ``{session_id, version, messages}``."""
        return cast(Dict[str, Any], self._c.call(api.append_messages(session_id, messages, if_match, request_id)))

    def list(self, session_id: str, *, page_size: Optional[int] = None, include_deleted: bool = False) -> Iterator[Message]:
        """Every message, oldest first."""
        return cast(Iterator[Message], self._c.pages(api.list_messages(session_id, page_size, include_deleted)))

    def delete(self, session_id: str, seq: int, *, if_match: Optional[int] = None,
               request_id: Optional[str] = None) -> Session:
        """Deletes (redacts) one message; answers the session at its next version."""
        return cast(Session, self._c.call(api.delete_message(session_id, seq, if_match, request_id)))


class WorkingMemory(_Part):
    """A session's working memory, its revisions and their diffs."""

    def get(self, session_id: str) -> Memory:
        """The document with the session's ``version`` and the document's ``memory_version``."""
        return cast(Memory, self._c.call(api.get_memory(session_id)))

    def patch(self, session_id: str, patch: Mapping[str, Any], *, if_match: Optional[int] = None,
              request_id: Optional[str] = None) -> Memory:
        """Applies a JSON Merge Patch (``None`` deletes a key)."""
        return cast(Memory, self._c.call(api.patch_memory(session_id, patch, if_match, request_id)))

    def history(self, session_id: str, *, page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every revision, newest first: ``{memory_version, version, patch, document, run_id?}``."""
        return self._c.pages(api.memory_history(session_id, page_size))

    def diff(self, session_id: str, from_version: int, to_version: int) -> Dict[str, Any]:
        """The changes between two memory versions (0 is the empty document)."""
        return cast(Dict[str, Any], self._c.call(api.memory_diff(session_id, from_version, to_version)))


class Runs(_Part):
    """Runs of the agent: start, get, list, cancel, events, approvals and client tool outputs."""

    def start(self, session_id: str, message: str, *, multitask: Optional[str] = None, agent: Optional[str] = None,
              tools: Optional[Sequence[Mapping[str, Any]]] = None, input: Optional[api.Messages] = None,
              metadata: Any = None, if_match: Optional[int] = None, request_id: Optional[str] = None) -> Run:
        """Appends the user message and queues a run (202); a retry starts no second run."""
        return cast(Run, self._c.call(api.start_run(session_id, message, multitask=multitask, agent=agent, tools=tools,
                                                    input=input, metadata=metadata, if_match=if_match,
                                                    request_id=request_id)))

    def get(self, run_id: str) -> Run:
        """The run."""
        return cast(Run, self._c.call(api.get_run(run_id)))

    def list(self, session_id: str, *, page_size: Optional[int] = None) -> Iterator[Run]:
        """Every run of a session, newest first."""
        return cast(Iterator[Run], self._c.pages(api.list_runs(session_id, page_size)))

    def actions(self, run_id: str, *, page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """The run's tool journal, by step and index."""
        return self._c.pages(api.list_actions(run_id, page_size))

    def cancel(self, run_id: str, *, request_id: Optional[str] = None) -> Run:
        """Asks the run to stop (at once when queued or waiting)."""
        return cast(Run, self._c.call(api.cancel_run(run_id, request_id)))

    def approve(self, run_id: str, action_id: str, *, arguments: Optional[Mapping[str, Any]] = None,
                request_id: Optional[str] = None) -> Run:
        """Approves the action the run waits for, with ``arguments`` instead of the model's if given."""
        return cast(Run, self._c.call(api.decide(run_id, action_id, "approve", arguments=arguments, request_id=request_id)))

    def reject(self, run_id: str, action_id: str, *, reason: Optional[str] = None,
               request_id: Optional[str] = None) -> Run:
        """Rejects the action: it does not run, and the model is told ``reason``."""
        return cast(Run, self._c.call(api.decide(run_id, action_id, "reject", reason=reason, request_id=request_id)))

    def decide(self, run_id: str, action_id: str, decision: str, *, result: Optional[str] = None,
               request_id: Optional[str] = None) -> Run:
        """Settles a call cut off by a crash: ``rerun``, ``mark_done`` (with ``result``) or ``skip``."""
        return cast(Run, self._c.call(api.decide(run_id, action_id, decision, result=result, request_id=request_id)))

    def submit_tool_outputs(self, run_id: str, outputs: Mapping[str, str], *,
                            request_id: Optional[str] = None) -> Run:
        """Answers the client tool calls a run waits for: ``{call_id: output}``."""
        return cast(Run, self._c.call(api.tool_outputs(run_id, outputs, request_id)))

    def events(self, run_id: str, *, after: int = 0, follow: bool = True) -> "EventStream":
        """The run's events after seq ``after``, then new ones until its last event; across a
        dropped connection or a server restart the stream resumes with ``Last-Event-ID``, so each
        stored event comes exactly once. With ``follow=False`` it ends after the stored events.
        A model's words come first as previews (``preview``, seq 0) and the live stream skips
        their stored copies, so each delta comes once: as its preview, or as its stored copy
        when the stream resumed before the preview reached it."""
        return EventStream(self._c, run_id, after, follow)

    def wait(self, run_id: str, *, on_tool_call: Optional[Callable[[ToolCall], Any]] = None,
             on_approval: Optional[Callable[[Dict[str, Any]], Decision]] = None,
             on_event: Optional[Callable[[Event], None]] = None, after: int = 0) -> Run:
        """Follows the run's events to its end and answers the run. When it asks for client tool
        outputs, ``on_tool_call(call)`` runs each call (its answer, a string or JSON, is the
        output) and the outputs are posted; when it waits for an approval, ``on_approval(action)``
        decides (True, a dict of edited arguments, False/None, or a reason string to reject).
        Without the callback it needs, the run is answered as it waits."""
        for ev in self.events(run_id, after=after):
            if on_event is not None:
                on_event(ev)
            if ev.type == "run.requires_action":
                if on_tool_call is None:
                    run = self.get(run_id)
                    if run["status"] == "requires_action":
                        return run
                    continue  # answered since: the stream goes on
                calls: List[ToolCall] = (ev.data.get("required_action") or {}).get("tool_calls") or []
                outputs = {c["call_id"]: tool_output(on_tool_call(c)) for c in calls}
                try:
                    self.submit_tool_outputs(run_id, outputs)
                except Conflict:
                    pass  # answered already (a stream read again from its start): the run went on
            elif ev.type == "run.waiting_approval":
                if on_approval is None:
                    run = self.get(run_id)
                    if run["status"] == "waiting_approval":
                        return run
                    continue  # decided since
                action: Dict[str, Any] = ev.data.get("action") or {}
                d = on_approval(action)
                try:
                    self._decide(run_id, action, d)
                except Conflict:
                    pass  # decided already
        return self.get(run_id)

    def _decide(self, run_id: str, action: Dict[str, Any], d: Decision) -> None:
        if d is True:
            self.approve(run_id, action["id"])
        elif isinstance(d, Mapping):
            self.approve(run_id, action["id"], arguments=d)
        else:
            self.reject(run_id, action["id"], reason=d if isinstance(d, str) else None)


class EventStream(Iterator[Event]):
    """A run's events, resumed by ``Last-Event-ID`` across disconnects and restarts (up to the
    client's ``stream_retries`` failures in a row, with backoff). Iterate it; ``close()`` (or a
    ``with`` block) drops the connection early. ``last`` is the seq of the last event yielded."""

    def __init__(self, c: Carryon, run_id: str, after: int, follow: bool) -> None:
        self._c, self.run_id, self.follow = c, run_id, follow
        self._t = Tracker(after)
        self._resp: Optional[httpx.Response] = None
        self._lines: Optional[Iterator[str]] = None
        self._parser = FrameParser()
        self._failures = 0
        self._ended = False
        self._connections = 0

    @property
    def reconnects(self) -> int:
        """How many times the stream connected again after its first connection."""
        return max(0, self._connections - 1)

    @property
    def last(self) -> int:
        """The seq of the last stored event yielded (where a resume starts)."""
        return self._t.last

    def __iter__(self) -> "EventStream":
        return self

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Drops the connection; the stream ends."""
        self._drop()
        self._ended = True

    def _drop(self) -> None:
        if self._resp is not None:
            self._resp.close()
        self._resp, self._lines, self._parser = None, None, FrameParser()

    def _connect(self) -> None:
        self._t.reconnected()
        req = api.events(self.run_id, self._t.last, self.follow)
        httpreq = self._c._http.build_request("GET", req.path, params=req.query(), headers=req.headers,
                                              timeout=STREAM_TIMEOUT)
        resp = self._c._http.send(httpreq, stream=True)
        if resp.status_code >= 400:
            resp.read()
            resp.close()
            raise problem_of(resp)
        self._resp, self._lines = resp, resp.iter_lines()
        self._connections += 1

    def _broke(self, cause: BaseException) -> None:
        """Counts one failure in a row and waits its backoff; past the bound the stream fails."""
        self._drop()
        self._failures += 1
        if self._failures > self._c.stream_retries:
            self._ended = True
            if isinstance(cause, CarryonError):
                raise cause
            raise StreamBroken(0, "stream_broken", f"the event stream of run {self.run_id} broke {self._failures} "
                               f"times in a row after event {self._t.last}: {cause!r}") from cause
        time.sleep(self._c.retry.delay(self._failures, getattr(cause, "retry_after", None)))

    def __next__(self) -> Event:
        while True:
            if self._ended or self._t.done:
                self.close()
                raise StopIteration
            if self._lines is None:
                try:
                    self._connect()
                except httpx.TransportError as e:
                    self._broke(e)
                    continue
                except CarryonError as e:
                    if e.status in (429, 500, 502, 503, 504):
                        self._broke(e)
                        continue
                    self.close()
                    raise
            assert self._lines is not None
            try:
                line = next(self._lines)
            except StopIteration:
                if not self.follow and not self._parser.partial:
                    self.close()  # without follow the server ends the stream after the stored events
                    raise
                self._broke(ConnectionError("the stream ended before the run's last event"))
                continue
            except httpx.TransportError as e:
                self._broke(e)
                continue
            frame = self._parser.feed(line)
            if frame is None:
                continue
            if frame.event == "error":
                err = problem_of(httpx.Response(500, content="\n".join(frame.data).encode()))
                if err.code in ("internal", "unavailable"):
                    self._broke(err)  # perhaps passing (the server is stopping): resume
                    continue
                self.close()
                raise err
            ev = self._t.take(frame)
            if ev is None:
                continue
            self._failures = 0
            return ev


class LongTermMemory(_Part):
    """The caller's long-term memory: items under a namespace and a key, and ranked search."""

    def put(self, namespace: str, key: str, value: Any, *, text: Optional[str] = None, ttl_seconds: Optional[int] = None,
            if_match: Optional[int] = None, request_id: Optional[str] = None) -> Dict[str, Any]:
        """Stores (replaces) an item; ``if_match=0`` puts only when there is none yet."""
        return cast(Dict[str, Any], self._c.call(api.put_item(namespace, key, value, text, ttl_seconds, if_match, request_id)))

    def get(self, namespace: str, key: str) -> Dict[str, Any]:
        """The item."""
        return cast(Dict[str, Any], self._c.call(api.get_item(namespace, key)))

    def delete(self, namespace: str, key: str, *, if_match: Optional[int] = None, request_id: Optional[str] = None) -> None:
        """Forgets the item."""
        self._c.call(api.delete_item(namespace, key, if_match, request_id))

    def list(self, namespace: Optional[str] = None, *, page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every item (under ``namespace``), by namespace and key."""
        return self._c.pages(api.list_items(namespace, page_size))

    def search(self, query: str, *, namespace: Optional[str] = None, mode: Optional[str] = None,
               min_score: Optional[float] = None, filter: Optional[Mapping[str, Any]] = None,
               page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """The items most relevant to ``query``, best first (up to the 1000 best), each with its
        ``score`` (and, in hybrid mode, ``scores``). ``mode`` is ``hybrid`` (the default),
        ``semantic`` or ``keyword``; ``min_score`` leaves out lower scores; ``filter`` keeps the
        items whose value is an object with each of these top-level fields at exactly this value."""
        return self._c.pages(api.search_items(query, namespace, mode, min_score, filter, page_size), cursor_in_body=True)

    def search_page(self, query: str, *, namespace: Optional[str] = None, mode: Optional[str] = None,
                    min_score: Optional[float] = None, filter: Optional[Mapping[str, Any]] = None,
                    limit: Optional[int] = None, cursor: Optional[str] = None) -> Dict[str, Any]:
        """One page of a search as the server answers it: ``{items, mode, next_cursor?}``, where
        ``mode`` is how the items were ranked (``keyword`` for a hybrid search on a server without
        embeddings). Pass ``next_cursor`` as ``cursor`` for the next page."""
        return cast(Dict[str, Any], self._c.call(api.search_items(query, namespace, mode, min_score, filter, limit, cursor)))

    def add(self, namespace: str, text: str, *, value: Any = None, ttl_seconds: Optional[int] = None,
            request_id: Optional[str] = None) -> Dict[str, Any]:
        """Remembers a fact under a key the server chooses (``value`` defaults to the text). When the
        namespace holds a near duplicate, the add updates that item instead: the answer names it
        (``consolidated_into``, ``similarity``) and the value it replaced (``supersedes``), kept
        as an earlier version."""
        return cast(Dict[str, Any], self._c.call(api.add_item(namespace, text, value, ttl_seconds, request_id)))

    def versions(self, namespace: str, key: str) -> List[Dict[str, Any]]:
        """The earlier values of the item that consolidating adds replaced, newest first:
        ``{version, value, text, superseded_at}``."""
        return cast(List[Dict[str, Any]], self._c.call(api.item_versions(namespace, key))["items"])


class Users(_Part):
    """Users and keys (admin routes, but ``me``)."""

    def me(self) -> Dict[str, Any]:
        """The caller."""
        return self._c.me()

    def my_usage(self, *, days: Optional[int] = None) -> Dict[str, Any]:
        """The caller's spend: ``{user_id, today, month, days, budget}``, ``days`` the last
        ``days`` UTC days (default 30, zeros included)."""
        return cast(Dict[str, Any], self._c.call(api.my_usage(days)))

    def usage(self, user: str, *, days: Optional[int] = None) -> Dict[str, Any]:
        """A user's spend, by id or name, as ``my_usage`` answers that user (admins only)."""
        return cast(Dict[str, Any], self._c.call(api.user_usage(user, days)))

    def budget(self, user: str) -> Dict[str, Any]:
        """A user's budgets ``{day?, month?}``, by id or name (admins only)."""
        return cast(Dict[str, Any], self._c.call(api.user_budget(user)))

    def set_budget(self, user: str, *, day: Optional[Mapping[str, Any]] = None,
                   month: Optional[Mapping[str, Any]] = None, request_id: Optional[str] = None) -> Dict[str, Any]:
        """Replaces a user's budgets (each ``{tokens?, usd?, on_exceed?}``; one left out is none;
        admins only)."""
        return cast(Dict[str, Any], self._c.call(api.set_user_budget(user, day, month, request_id)))

    def create(self, name: str, *, admin: bool = False) -> Dict[str, Any]:
        """Makes a user: ``{user, key}``; the key's secret is shown this once (no retries)."""
        return cast(Dict[str, Any], self._c.call(api.create_user(name, admin)))

    def list(self, *, page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every user, by name."""
        return self._c.pages(api.list_users(page_size))

    def get(self, user: str) -> Dict[str, Any]:
        """A user, by id or name."""
        return cast(Dict[str, Any], self._c.call(api.get_user(user)))

    def create_key(self, user: str) -> Dict[str, Any]:
        """A new key for the user: ``{key, secret}`` (no retries)."""
        return cast(Dict[str, Any], self._c.call(api.create_key(user)))

    def keys(self, user: str, *, page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """The user's keys, oldest first (prefixes, never secrets)."""
        return self._c.pages(api.list_keys(user, page_size))

    def revoke_key(self, key_id: str, *, request_id: Optional[str] = None) -> None:
        """Revokes a key at once."""
        self._c.call(api.revoke_key(key_id, request_id))
