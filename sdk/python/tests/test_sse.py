"""The stream's bookkeeping without a server: frames, previews and resumes."""

from __future__ import annotations

import json
import unittest

from carryon._sse import FrameParser, Tracker


def frames(text: str) -> list:
    p = FrameParser()
    return [f for f in (p.feed(line) for line in text.split("\n")) if f is not None]


def event(seq: int, typ: str, data: dict) -> str:
    head = f"id: {seq}\n" if seq else ""
    return head + f"event: {typ}\ndata: " + json.dumps({"run_id": "run_1", "seq": seq, "type": typ, "data": data}) + "\n\n"


class Bookkeeping(unittest.TestCase):
    def test_previews_then_stored_copies_come_once(self) -> None:
        t = Tracker(0)
        text = ": keepalive\n\n" + event(1, "run.queued", {}) + event(0, "model.delta", {"text": "hi"}) \
            + event(2, "model.delta", {"text": "hi"}) + event(3, "run.finished", {})
        got = [e for e in (t.take(f) for f in frames(text)) if e is not None]
        self.assertEqual([(e.seq, e.type, e.preview) for e in got],
                         [(1, "run.queued", False), (0, "model.delta", True), (3, "run.finished", False)])
        self.assertTrue(t.done)

    def test_a_resume_repeats_nothing(self) -> None:
        t = Tracker(0)
        first = [t.take(f) for f in frames(event(1, "run.queued", {}) + event(2, "run.started", {}))]
        again = [t.take(f) for f in frames(event(2, "run.started", {}) + event(3, "tool.started", {}))]
        self.assertEqual([e.seq for e in first + again if e], [1, 2, 3])
        self.assertEqual(t.last, 3)

    def test_previews_sent_again_after_a_reconnect_come_once(self) -> None:
        t = Tracker(0)
        t.reconnected()
        first = [t.take(f) for f in frames(event(0, "model.delta", {"text": "hi"}))]
        t.reconnected()  # the connection dropped in the middle of the model call
        again = [t.take(f) for f in frames(event(0, "model.delta", {"text": "hi"}) + event(0, "model.delta", {"text": " there"})
                                          + event(1, "model.delta", {"text": "hi"}) + event(2, "model.delta", {"text": " there"})
                                          + event(3, "run.finished", {}))]
        self.assertEqual([(e.seq, e.data) for e in first + again if e],
                         [(0, {"text": "hi"}), (0, {"text": " there"}), (3, {})])

    def test_a_cut_frame_is_partial(self) -> None:
        p = FrameParser()
        p.feed("id: 4")
        p.feed("data: {")
        self.assertTrue(p.partial)
