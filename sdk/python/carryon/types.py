"""The shapes carryon answers with. Answers are plain JSON objects (dicts); the TypedDicts name
their common fields for type checkers, and an ``Event`` of a run's stream is a dataclass."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, NotRequired, Optional, TypedDict

__all__ = ["Event", "Session", "Message", "Run", "Memory", "ToolCall", "ClientTool", "LongTermItem"]


@dataclass
class Event:
    """One event of a run: ``seq`` (1, 2, … without gaps; 0 for a live preview of a model delta),
    ``type`` (``run.started``, ``model.delta``, ``tool.finished``, ``run.finished``, …) and ``data``."""

    seq: int
    type: str
    run_id: str
    data: Dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    #: a ``model.delta`` sent before the step that holds it was stored (no ``id:``, seq 0)
    preview: bool = False


class Message(TypedDict):
    """A stored message of a session."""

    session_id: str
    seq: int
    role: str
    kind: str
    content: str
    version: int
    created_at: str
    tokens: NotRequired[int]
    tool_calls: NotRequired[List[Dict[str, Any]]]
    tool_call_id: NotRequired[str]
    name: NotRequired[str]
    metadata: NotRequired[Dict[str, Any]]


class Session(TypedDict):
    """A session; ``GET`` adds its ``working_memory`` and last ``messages``."""

    id: str
    owner_id: str
    status: str
    version: int
    created_at: str
    updated_at: str
    message_count: int
    last_seq: int
    memory_version: int
    title: NotRequired[str]
    agent: NotRequired[str]
    external_id: NotRequired[str]
    metadata: NotRequired[Dict[str, Any]]
    working_memory: NotRequired[Dict[str, Any]]
    messages: NotRequired[List[Message]]


class Memory(TypedDict):
    """A session's working memory: the session ``version`` and the document's ``memory_version``."""

    session_id: str
    version: int
    memory_version: int
    working_memory: Dict[str, Any]


class ToolCall(TypedDict):
    """A client tool call a run waits for: answer it with its ``call_id``."""

    call_id: str
    name: str
    arguments: Dict[str, Any]


class ClientTool(TypedDict):
    """A function tool the client runs itself, offered to the model for one run."""

    name: str
    description: NotRequired[str]
    parameters: NotRequired[Dict[str, Any]]


class Run(TypedDict):
    """A run of the agent on a session."""

    id: str
    session_id: str
    status: str
    message: str
    model: str
    agent: str
    step: int
    attempt: int
    created_at: str
    reply: NotRequired[str]
    error: NotRequired[str]
    required_action: NotRequired[Dict[str, List[ToolCall]]]
    pending_action: NotRequired[Dict[str, Any]]
    usage: NotRequired[Dict[str, int]]


class LongTermItem(TypedDict):
    """A long-term memory item of the caller."""

    namespace: str
    key: str
    value: Any
    version: NotRequired[int]
    text: NotRequired[str]
    score: NotRequired[float]
    #: what each ranking of a hybrid search made of the item: ``keyword`` and ``semantic``
    scores: NotRequired[Dict[str, float]]
