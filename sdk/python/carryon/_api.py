"""The routes of carryon's native API (docs/API.md) as request descriptions, one function each;
the sync and async clients send them."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ._core import Req, drop_none, read, seg, write

Messages = Union[str, Sequence[Mapping[str, Any]]]


def as_messages(messages: Messages) -> List[Mapping[str, Any]]:
    """A list of messages; a string is one user message."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return list(messages)


def session_path(session_id: str) -> str:
    """The path of a session."""
    return "/v1/sessions/" + seg(session_id)


def run_path(run_id: str) -> str:
    """The path of a run."""
    return "/v1/runs/" + seg(run_id)


# Sessions

def create_session(*, title: Optional[str], metadata: Optional[Mapping[str, Any]], working_memory: Optional[Mapping[str, Any]],
                   messages: Optional[Messages], agent: Optional[str], external_id: Optional[str], if_exists: Optional[str],
                   idle_ttl_seconds: Optional[int], request_id: Optional[str],
                   budget: Optional[Mapping[str, Any]] = None) -> Req:
    """POST /v1/sessions."""
    body = drop_none(title=title, metadata=metadata, working_memory=working_memory,
                     messages=None if messages is None else as_messages(messages),
                     agent=agent, external_id=external_id, if_exists=if_exists, idle_ttl_seconds=idle_ttl_seconds,
                     budget=None if budget is None else dict(budget))
    return write("POST", "/v1/sessions", body, request_id=request_id)


def get_session(session_id: str, messages: Optional[int]) -> Req:
    """GET /v1/sessions/{id}."""
    return read(session_path(session_id), messages=messages)


def list_sessions(status: Optional[str], external_id: Optional[str], limit: Optional[int]) -> Req:
    """GET /v1/sessions (a page; the cursor is added by the pager)."""
    return read("/v1/sessions", status=status, external_id=external_id, limit=limit)


def patch_session(session_id: str, *, title: Optional[str], metadata: Optional[Mapping[str, Any]],
                  idle_ttl_seconds: Optional[int], if_match: Optional[int], request_id: Optional[str],
                  budget: Optional[Mapping[str, Any]] = None) -> Req:
    """PATCH /v1/sessions/{id}."""
    body = drop_none(title=title, metadata=metadata, idle_ttl_seconds=idle_ttl_seconds,
                     budget=None if budget is None else dict(budget))
    return write("PATCH", session_path(session_id), body, if_match=if_match, request_id=request_id)


def session_action(session_id: str, action: str, if_match: Optional[int], request_id: Optional[str]) -> Req:
    """POST /v1/sessions/{id}/close or /restore."""
    return write("POST", session_path(session_id) + "/" + action, if_match=if_match, request_id=request_id)


def delete_session(session_id: str, if_match: Optional[int], request_id: Optional[str]) -> Req:
    """DELETE /v1/sessions/{id}."""
    return write("DELETE", session_path(session_id), if_match=if_match, request_id=request_id)


def fork_session(session_id: str, at_version: Optional[int], title: Optional[str], if_match: Optional[int],
                 request_id: Optional[str]) -> Req:
    """POST /v1/sessions/{id}/fork."""
    return write("POST", session_path(session_id) + "/fork", drop_none(at_version=at_version, title=title),
                 if_match=if_match, request_id=request_id)


def session_usage(session_id: str, days: Optional[int]) -> Req:
    """GET /v1/sessions/{id}/usage."""
    return read(session_path(session_id) + "/usage", days=days)


def context(session_id: str) -> Req:
    """GET /v1/sessions/{id}/context."""
    return read(session_path(session_id) + "/context")


# Messages

def append_messages(session_id: str, messages: Messages, if_match: Optional[int], request_id: Optional[str]) -> Req:
    """POST /v1/sessions/{id}/messages."""
    return write("POST", session_path(session_id) + "/messages", {"messages": as_messages(messages)},
                 if_match=if_match, request_id=request_id)


def list_messages(session_id: str, limit: Optional[int], include_deleted: Optional[bool]) -> Req:
    """GET /v1/sessions/{id}/messages."""
    return read(session_path(session_id) + "/messages", limit=limit, include_deleted=include_deleted or None)


def delete_message(session_id: str, seq: int, if_match: Optional[int], request_id: Optional[str]) -> Req:
    """DELETE /v1/sessions/{id}/messages/{seq}."""
    return write("DELETE", session_path(session_id) + "/messages/" + seg(seq), if_match=if_match, request_id=request_id)


# Working memory

def get_memory(session_id: str) -> Req:
    """GET /v1/sessions/{id}/working_memory."""
    return read(session_path(session_id) + "/working_memory")


def patch_memory(session_id: str, patch: Mapping[str, Any], if_match: Optional[int], request_id: Optional[str]) -> Req:
    """PATCH /v1/sessions/{id}/working_memory with a JSON Merge Patch."""
    return write("PATCH", session_path(session_id) + "/working_memory", {"patch": dict(patch)}, if_match=if_match, request_id=request_id)


def memory_history(session_id: str, limit: Optional[int]) -> Req:
    """GET /v1/sessions/{id}/working_memory/history."""
    return read(session_path(session_id) + "/working_memory/history", limit=limit)


def memory_diff(session_id: str, from_version: int, to_version: int) -> Req:
    """GET /v1/sessions/{id}/working_memory/diff."""
    return read(session_path(session_id) + "/working_memory/diff", **{"from": from_version, "to": to_version})


# Runs

def start_run(session_id: str, message: str, *, multitask: Optional[str], agent: Optional[str],
              tools: Optional[Sequence[Mapping[str, Any]]], input: Optional[Messages], metadata: Any,
              if_match: Optional[int], request_id: Optional[str]) -> Req:
    """POST /v1/sessions/{id}/runs."""
    body = drop_none(message=message, multitask=multitask, agent=agent,
                     tools=None if tools is None else list(tools),
                     input=None if input is None else as_messages(input), metadata=metadata)
    return write("POST", session_path(session_id) + "/runs", body, if_match=if_match, request_id=request_id)


def chat(message: str, session_id: Optional[str], agent: Optional[str], tools: Optional[Sequence[Mapping[str, Any]]],
         if_match: Optional[int], request_id: Optional[str]) -> Req:
    """POST /v1/chat."""
    body = drop_none(message=message, session_id=session_id, agent=agent, tools=None if tools is None else list(tools))
    return write("POST", "/v1/chat", body, if_match=if_match, request_id=request_id)


def get_run(run_id: str) -> Req:
    """GET /v1/runs/{id}."""
    return read(run_path(run_id))


def list_runs(session_id: str, limit: Optional[int]) -> Req:
    """GET /v1/sessions/{id}/runs."""
    return read(session_path(session_id) + "/runs", limit=limit)


def list_actions(run_id: str, limit: Optional[int]) -> Req:
    """GET /v1/runs/{id}/actions."""
    return read(run_path(run_id) + "/actions", limit=limit)


def cancel_run(run_id: str, request_id: Optional[str]) -> Req:
    """POST /v1/runs/{id}/cancel."""
    return write("POST", run_path(run_id) + "/cancel", request_id=request_id)


def decide(run_id: str, action_id: str, decision: str, *, arguments: Optional[Mapping[str, Any]] = None,
           reason: Optional[str] = None, result: Optional[str] = None, request_id: Optional[str] = None) -> Req:
    """POST /v1/runs/{id}/approve."""
    body = drop_none(action_id=action_id, decision=decision, arguments=None if arguments is None else dict(arguments),
                     reason=reason, result=result)
    return write("POST", run_path(run_id) + "/approve", body, request_id=request_id)


def tool_outputs(run_id: str, outputs: Mapping[str, str], request_id: Optional[str]) -> Req:
    """POST /v1/runs/{id}/tool_outputs, from call_id → output."""
    body = {"outputs": [{"call_id": k, "output": v} for k, v in outputs.items()]}
    return write("POST", run_path(run_id) + "/tool_outputs", body, request_id=request_id)


def events(run_id: str, after: int, follow: bool) -> Req:
    """GET /v1/runs/{id}/events as a stream; Last-Event-ID is set by the stream."""
    r = read(run_path(run_id) + "/events", follow=None if follow else False)
    r.headers["Accept"] = "text/event-stream"
    if after > 0:
        r.headers["Last-Event-ID"] = str(after)
    r.stream = True
    return r


# Long-term memory

def memory_item_path(namespace: str, key: str) -> str:
    """The path of a long-term memory item."""
    return "/v1/memories/" + seg(namespace) + "/" + seg(key)


def put_item(namespace: str, key: str, value: Any, text: Optional[str], ttl_seconds: Optional[int],
             if_match: Optional[int], request_id: Optional[str]) -> Req:
    """PUT /v1/memories/{namespace}/{key}."""
    body: Dict[str, Any] = {"value": value}
    body.update(drop_none(text=text, ttl_seconds=ttl_seconds))
    return write("PUT", memory_item_path(namespace, key), body, if_match=if_match, request_id=request_id)


def get_item(namespace: str, key: str) -> Req:
    """GET /v1/memories/{namespace}/{key}."""
    return read(memory_item_path(namespace, key))


def delete_item(namespace: str, key: str, if_match: Optional[int], request_id: Optional[str]) -> Req:
    """DELETE /v1/memories/{namespace}/{key}."""
    return write("DELETE", memory_item_path(namespace, key), if_match=if_match, request_id=request_id)


def list_items(namespace: Optional[str], limit: Optional[int]) -> Req:
    """GET /v1/memories."""
    return read("/v1/memories", namespace=namespace, limit=limit)


def add_item(namespace: str, text: str, value: Any, ttl_seconds: Optional[int], request_id: Optional[str]) -> Req:
    """POST /v1/memories/{namespace}: a fact under a key the server chooses, or consolidated into
    a near duplicate. The namespace ``search`` is refused here: its path is the search's."""
    if namespace == "search":
        raise ValueError('carryon: add cannot write to the namespace "search" (POST /v1/memories/search is the search); put to it with a key')
    body = drop_none(text=text, value=value, ttl_seconds=ttl_seconds)
    return write("POST", "/v1/memories/" + seg(namespace), body, request_id=request_id)


def item_versions(namespace: str, key: str) -> Req:
    """GET /v1/memories/{namespace}/{key}/versions."""
    return read(memory_item_path(namespace, key) + "/versions")


def search_items(query: str, namespace: Optional[str], mode: Optional[str], min_score: Optional[float],
                 filter: Optional[Mapping[str, Any]], limit: Optional[int], cursor: Optional[str] = None) -> Req:
    """POST /v1/memories/search: a read, so no Idempotency-Key (the server refuses one), and
    safe to retry; the pager puts the cursor in the body."""
    body = drop_none(query=query, namespace=namespace, mode=mode, min_score=min_score,
                     filter=None if filter is None else dict(filter), limit=limit, cursor=cursor)
    return Req("POST", "/v1/memories/search", body=body)


# Users and keys

def me() -> Req:
    """GET /v1/me."""
    return read("/v1/me")


def create_user(name: str, admin: bool) -> Req:
    """POST /v1/users: answers a secret once, so it takes no request id and is not retried."""
    return Req("POST", "/v1/users", body={"name": name, "admin": admin}, retry=False)


def list_users(limit: Optional[int]) -> Req:
    """GET /v1/users."""
    return read("/v1/users", limit=limit)


def get_user(user: str) -> Req:
    """GET /v1/users/{id}."""
    return read("/v1/users/" + seg(user))


def create_key(user: str) -> Req:
    """POST /v1/users/{id}/keys: not retried (a retry would make another key)."""
    return Req("POST", "/v1/users/" + seg(user) + "/keys", body={}, retry=False)


def list_keys(user: str, limit: Optional[int]) -> Req:
    """GET /v1/users/{id}/keys."""
    return read("/v1/users/" + seg(user) + "/keys", limit=limit)


def revoke_key(key_id: str, request_id: Optional[str]) -> Req:
    """DELETE /v1/keys/{id}."""
    return write("DELETE", "/v1/keys/" + seg(key_id), request_id=request_id)


# Usage and budgets

def my_usage(days: Optional[int]) -> Req:
    """GET /v1/me/usage."""
    return read("/v1/me/usage", days=days)


def user_usage(user: str, days: Optional[int]) -> Req:
    """GET /v1/users/{id}/usage."""
    return read("/v1/users/" + seg(user) + "/usage", days=days)


def user_budget(user: str) -> Req:
    """GET /v1/users/{id}/budget."""
    return read("/v1/users/" + seg(user) + "/budget")


def set_user_budget(user: str, day: Optional[Mapping[str, Any]], month: Optional[Mapping[str, Any]],
                    request_id: Optional[str]) -> Req:
    """PUT /v1/users/{id}/budget: the budgets left out are none."""
    body = drop_none(day=None if day is None else dict(day), month=None if month is None else dict(month))
    return write("PUT", "/v1/users/" + seg(user) + "/budget", body, request_id=request_id)
