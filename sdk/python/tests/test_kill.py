"""kill -9 of the server (SIGKILL, then a restart on the same data, through the Go test's proxy):
a stream resumes with every event exactly once, and a write whose answer was lost in the kill is
retried by the SDK with its Idempotency-Key and applied once. Sync and async."""

from __future__ import annotations

import asyncio

import unittest

import carryon

from .env import PICNIC, Recorder, async_client, client, control, needs_server, seen

PATIENT = carryon.Retry(attempts=30, backoff=0.1, max_backoff=1.0)


def exactly_once(t: unittest.TestCase, live: list, stored: list) -> None:
    """The live stream (across the kill) held every stored event once and nothing twice: each
    event but a model's delta exactly once, in order; a delta as its stored copy at most once
    (or as a preview, which has no seq). Previews of a step the kill cut off were never stored."""
    t.assertEqual([e.seq for e in stored], list(range(1, len(stored) + 1)), "the stored events have a gap")
    seqs = [e.seq for e in live if not e.preview]
    t.assertEqual(seqs, sorted(set(seqs)), "an event came twice or out of order")
    t.assertEqual([e for e in live if e.type != "model.delta"], [e for e in stored if e.type != "model.delta"],
                  "an event missed or repeated")


@needs_server
class KillSync(unittest.TestCase):
    def test_stream_resumes_across_a_kill(self) -> None:
        with client() as c:
            s = c.sessions.create(agent="slow")
            run = c.runs.start(s["id"], PICNIC)
            stream = c.runs.events(run["id"])
            events = []
            for ev in stream:
                events.append(ev)
                if ev.type == "run.started" and ev.data.get("attempt") == 1:
                    control("/_test/restart")  # the run is mid-step: its runner dies with the server
            done = c.runs.get(run["id"])
            stored = list(c.runs.events(run["id"], follow=False))
            exactly_once(self, events, stored)
            self.assertEqual(stored[-1].type, "run.finished", done)
            self.assertGreaterEqual(stream.reconnects, 1, "the stream never reconnected")
            self.assertEqual(done["status"], "succeeded")
            self.assertGreaterEqual(done["attempt"], 2, "the run was not cut off by the kill")
            self.assertEqual(len([e for e in stored if e.type == "run.started"]), done["attempt"])

    def test_write_retried_across_a_kill_is_applied_once(self) -> None:
        rec = Recorder()
        with client(rec, retry=PATIENT) as c:
            s = c.sessions.create()
            path = f"/v1/sessions/{s['id']}/messages"
            control("/_test/kill-after?path=" + path)
            out = c.messages.append(s["id"], "sent once, answered after the restart", if_match=1)
            keys = rec.keys("POST", path)
            self.assertEqual(len(set(keys)), 1)
            self.assertGreaterEqual(seen(keys[0]), 2, "the write was not retried")
            self.assertEqual(out["version"], 2)
            msgs = [m["content"] for m in c.messages.list(s["id"])]
            self.assertEqual(msgs, ["sent once, answered after the restart"])
            self.assertEqual(c.sessions.get(s["id"])["version"], 2)


@needs_server
class KillAsync(unittest.IsolatedAsyncioTestCase):
    async def test_stream_resumes_across_a_kill(self) -> None:
        async with async_client() as c:
            s = await c.sessions.create(agent="slow")
            run = await c.runs.start(s["id"], PICNIC)
            live = []
            async with c.runs.events(run["id"]) as stream:
                async for ev in stream:
                    live.append(ev)
                    if ev.type == "run.started" and ev.data.get("attempt") == 1:
                        # in a thread: the loop keeps running while the server restarts
                        await asyncio.to_thread(control, "/_test/restart")
                reconnects = stream.reconnects
            stored = [e async for e in c.runs.events(run["id"], follow=False)]
            exactly_once(self, live, stored)
            self.assertEqual(stored[-1].type, "run.finished")
            self.assertGreaterEqual(reconnects, 1)
            self.assertGreaterEqual((await c.runs.get(run["id"]))["attempt"], 2)

    async def test_write_retried_across_a_kill_is_applied_once(self) -> None:
        rec = Recorder()
        async with async_client(rec, retry=PATIENT) as c:
            s = await c.sessions.create()
            path = f"/v1/sessions/{s['id']}/working_memory"
            control("/_test/kill-after?path=" + path)
            out = await c.memory.patch(s["id"], {"goal": "survive the kill"})
            keys = rec.keys("PATCH", path)
            self.assertEqual(len(set(keys)), 1)
            self.assertGreaterEqual(seen(keys[0]), 2)
            self.assertEqual(out["version"], 2)
            revs = [r async for r in c.memory.history(s["id"])]
            self.assertEqual([r["memory_version"] for r in revs], [out["memory_version"]], "the retried patch was applied twice")
            self.assertEqual((await c.sessions.get(s["id"]))["version"], 2)



if __name__ == "__main__":
    unittest.main()
