"""Server-Sent Events: the frame parser and the bookkeeping that makes a resumed run stream
yield every stored event exactly once (shared by the sync and async clients)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .types import Event

#: the event types after which a run's stream ends
FINAL_EVENTS = ("run.finished", "run.failed")


@dataclass
class Frame:
    """One SSE frame as sent: its ``id:``, ``event:`` and joined ``data:`` lines."""

    id: Optional[str] = None
    event: str = ""
    data: List[str] = field(default_factory=list)


class FrameParser:
    """Turns lines (without their line ending) into frames; comments (keepalives) are skipped."""

    def __init__(self) -> None:
        self._frame = Frame()
        self._seen = False

    def feed(self, line: str) -> Optional[Frame]:
        """Takes one line; returns a frame when the line ends one."""
        line = line.rstrip("\r\n")
        if line == "":
            f, seen = self._frame, self._seen
            self._frame, self._seen = Frame(), False
            if seen and (f.data or f.event == "error"):
                return f
            return None
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "id":
            self._frame.id, self._seen = value, True
        elif name == "event":
            self._frame.event, self._seen = value, True
        elif name == "data":
            self._frame.data.append(value)
            self._seen = True
        return None

    @property
    def partial(self) -> bool:
        """Whether a frame was begun and not ended (the connection was cut inside it)."""
        return self._seen


class Tracker:
    """Remembers the last stored event yielded and the previews yielded since, so that a stream
    resumed with ``Last-Event-ID`` yields nothing twice and skips the stored copies of previews
    it already yielded (docs/API.md: a ``model.delta`` comes first as a preview with seq 0)."""

    def __init__(self, after: int) -> None:
        #: the seq of the last stored event yielded (``Last-Event-ID`` of a reconnect)
        self.last = after
        #: whether the run's last event was yielded
        self.done = False
        self._previewed: List[Any] = []
        #: previews of this connection previewed already on an earlier one (after a reconnect the
        #: server sends the previews not stored yet again; they are not yielded twice)
        self._resent = 0

    def reconnected(self) -> None:
        """Called at each new connection: the previews it sends again are counted from here."""
        self._resent = 0

    def take(self, frame: Frame) -> Optional[Event]:
        """The event of a frame to yield, or None for one already yielded."""
        raw: Dict[str, Any] = json.loads("\n".join(frame.data))
        seq = raw.get("seq") or 0
        if frame.id:
            seq = int(frame.id)
        ev = Event(
            seq=seq,
            type=raw.get("type") or frame.event,
            run_id=raw.get("run_id", ""),
            data=raw.get("data") or {},
            created_at=raw.get("created_at", ""),
            preview=seq == 0,
        )
        if ev.preview:
            if self._resent < len(self._previewed) and self._previewed[self._resent] == ev.data:
                self._resent += 1  # yielded before the reconnect
                return None
            self._previewed = self._previewed[: self._resent] + [ev.data]
            self._resent += 1
            return ev
        if seq <= self.last:
            return None
        self.last = seq
        if self._previewed:
            if ev.type == "model.delta" and ev.data == self._previewed[0]:
                self._previewed.pop(0)
                self._resent = max(self._resent - 1, 0)
                return None
            self._previewed = []
            self._resent = 0
        if ev.type in FINAL_EVENTS:
            self.done = True
        return ev
