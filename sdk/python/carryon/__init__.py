"""carryon: Python clients of carryon's native API, the durable session hub and agent runtime.

``Carryon`` (sync) and ``AsyncCarryon`` (async) cover sessions, messages, working memory with its
versions, runs with their event streams, approvals, client tools and long-term memory. Every
write carries an ``Idempotency-Key`` and is retried with it; ``sessions.update`` re-reads and
re-applies on a version conflict; event streams resume by ``Last-Event-ID``; listings are
iterators; every refusal is a typed ``CarryonError`` with carryon's problem ``code``."""

from ._core import Retry
from .aio import AsyncCarryon, AsyncEventStream
from .client import Carryon, EventStream
from .errors import *  # noqa: F401,F403
from .errors import __all__ as _errors
from .types import ClientTool, Event, LongTermItem, Memory, Message, Run, Session, ToolCall

__all__ = [
    "Carryon", "AsyncCarryon", "EventStream", "AsyncEventStream", "Retry",
    "Event", "Session", "Message", "Run", "Memory", "ToolCall", "ClientTool", "LongTermItem",
    *_errors,
]
