"""The async client against a live server: the same helpers as the sync tests, awaited."""

from __future__ import annotations

import asyncio
import time
import unittest
import uuid

import carryon

from .env import PICNIC, WEATHER_TOOL, Recorder, async_client, bob_key, control, needs_server, seen, URL


@needs_server
class AsyncClient(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.rec = Recorder()
        self.c = async_client(self.rec)

    async def asyncTearDown(self) -> None:
        await self.c.close()

    async def test_sessions_paging_and_errors(self) -> None:
        c = self.c
        s = await c.create_session(title="async", working_memory={"goal": "g"})
        for i in range(5):
            await c.messages.append(s["id"], f"m{i}")
        self.assertEqual([m["content"] async for m in c.messages.list(s["id"], page_size=2)], [f"m{i}" for i in range(5)])
        self.assertIn(s["id"], [x["id"] async for x in c.sessions.list(page_size=2)])
        revs = [r["memory_version"] async for r in c.memory.history(s["id"], page_size=1)]
        self.assertEqual(revs, [1])
        fork = await c.sessions.fork(s["id"])
        self.assertEqual((await c.get_session(fork["id"]))["message_count"], 5)
        async with carryon.AsyncCarryon(URL, bob_key()) as bob:
            with self.assertRaises(carryon.NotFound):
                await bob.sessions.get(s["id"])
        await c.sessions.close(s["id"])
        with self.assertRaises(carryon.SessionClosed):
            await c.messages.append(s["id"], "closed")
        await c.sessions.restore(s["id"])
        await c.sessions.delete(s["id"])
        with self.assertRaises(carryon.NotFound) as e:
            await c.sessions.get(s["id"])
        self.assertEqual(e.exception.code, "not_found")
        writes = [r for r in self.rec.requests if r["method"] != "GET"]
        self.assertTrue(all(r["key"] for r in writes))
        self.assertEqual(len({r["key"] for r in writes}), len(writes))

    async def test_usage_and_budgets(self) -> None:
        c = self.c
        s = await c.sessions.create(title="budgeted", budget={"usd": 3})
        self.assertEqual(s["budget"], {"usd": 3, "on_exceed": "pause"})
        s = await c.sessions.patch(s["id"], budget={"tokens": 7})
        u = await c.sessions.usage(s["id"], days=1)
        self.assertEqual((len(u["days"]), u["budget"]), (1, {"tokens": 7, "on_exceed": "pause"}))
        mine = await c.users.my_usage(days=2)
        self.assertEqual(len(mine["days"]), 2)
        name = (await c.users.create("erin-" + uuid.uuid4().hex[:8]))["user"]["name"]
        got = await c.users.set_budget(name, month={"tokens": 99, "on_exceed": "fail"})
        self.assertEqual(got, {"month": {"tokens": 99, "on_exceed": "fail"}})
        self.assertEqual(await c.users.budget(name), got)
        self.assertEqual((await c.users.usage(name, days=4))["budget"], got)
        with self.assertRaises(carryon.InvalidRequest):
            await c.sessions.usage(s["id"], days=0)

    async def test_retry_after_429_with_the_same_key(self) -> None:
        c = self.c
        s = await c.sessions.create()
        path = f"/v1/sessions/{s['id']}/working_memory"
        control(f"/_test/fail?path={path}&n=1")
        began = time.monotonic()
        out = await c.memory.patch(s["id"], {"goal": "once"})
        self.assertGreaterEqual(time.monotonic() - began, 0.9)
        keys = self.rec.keys("PATCH", path)
        self.assertEqual((len(keys), len(set(keys)), seen(keys[0])), (2, 1, 2))
        self.assertEqual(len([r async for r in c.memory.history(s["id"])]), out["memory_version"], "patched twice")

    async def test_update_rereads_on_conflict(self) -> None:
        c = self.c
        s = await c.sessions.create(working_memory={"count": 0})
        calls = []

        async def bump(cur: carryon.Session) -> dict:
            calls.append(cur["version"])
            if len(calls) == 1:
                await c.memory.patch(s["id"], {"count": cur["working_memory"]["count"] + 1})
            return {"count": cur["working_memory"]["count"] + 1}

        mem = await c.sessions.update(s["id"], bump)
        self.assertEqual((mem["working_memory"]["count"], calls), (2, [1, 2]))
        # Two writers at once through update: neither increment is lost.
        await asyncio.gather(*(c.sessions.update(s["id"], lambda cur: {"count": cur["working_memory"]["count"] + 1})
                               for _ in range(4)))
        self.assertEqual((await c.memory.get(s["id"]))["working_memory"]["count"], 6)

    async def test_events_client_tools_and_approvals(self) -> None:
        c = self.c
        s = await c.sessions.create()
        run = await c.runs.start(s["id"], PICNIC)
        async with c.runs.events(run["id"]) as stream:
            live = [e async for e in stream]
        stored = [e async for e in c.runs.events(run["id"], follow=False)]
        self.assertEqual([e.seq for e in stored], list(range(1, len(stored) + 1)))
        self.assertEqual([e for e in live if e.type != "model.delta"], [e for e in stored if e.type != "model.delta"])
        self.assertEqual([e.data["text"] for e in live if e.type == "model.delta"],
                         [e.data["text"] for e in stored if e.type == "model.delta"], "a delta missed or repeated")
        ws = await c.sessions.create(agent="weather")

        async def weather(call: carryon.ToolCall) -> dict:
            await asyncio.sleep(0)
            return {"sky": "clear", "city": call["arguments"]["city"]}

        done = await c.run(ws["id"], "Weather in Paris?", tools=[WEATHER_TOOL], on_tool_call=weather)
        self.assertEqual(done["reply"], 'The weather: {"sky": "clear", "city": "Paris"}')
        cs = await c.sessions.create(agent="careful")
        decided = await c.run(cs["id"], PICNIC, on_approval=lambda action: True)
        self.assertEqual(decided["status"], "succeeded")
        self.assertEqual([a.get("approval") async for a in c.runs.actions(decided["id"]) if a["tool"] == "write_file"],
                         ["approved"])

    async def test_long_term_memory(self) -> None:
        c = self.c
        ns = "async" + uuid.uuid4().hex[:8]
        await c.memories.put(ns, "tea", "green", text="likes green tea")
        self.assertEqual([i["key"] async for i in c.memories.search("tea", namespace=ns)], ["tea"])
        self.assertEqual([i["key"] async for i in c.memories.list(ns)], ["tea"])
        await c.memories.delete(ns, "tea")
        with self.assertRaises(carryon.NotFound):
            await c.memories.get(ns, "tea")

    async def test_long_term_memory_add_versions_and_search_modes(self) -> None:
        c = self.c
        ns = "afacts" + uuid.uuid4().hex[:8]
        fact = await c.memories.add(ns, "likes green tea", value={"kind": "preference"})
        again = await c.memories.add(ns, "Likes green TEA", value={"kind": "preference", "sugar": False})
        self.assertEqual((again["consolidated_into"], again["similarity"], again["version"]), (fact["key"], 1, 2))
        self.assertEqual(again["supersedes"]["value"], {"kind": "preference"})
        self.assertEqual([(v["version"], v["value"]) for v in await c.memories.versions(ns, fact["key"])], [(1, {"kind": "preference"})])
        await c.memories.put(ns, "black", {"kind": "habit"}, text="drinks black tea")
        page = await c.memories.search_page("tea", namespace=ns)
        self.assertEqual((page["mode"], len(page["items"])), ("keyword", 2))
        self.assertEqual([i["key"] async for i in c.memories.search("tea", namespace=ns, filter={"kind": "habit"})], ["black"])
        self.assertEqual([i["key"] async for i in c.memories.search("green tea", namespace=ns, min_score=1)], [fact["key"]])
        with self.assertRaises(carryon.InvalidRequest) as semantic:
            await c.memories.search_page("what does she drink", mode="semantic")
        self.assertEqual(semantic.exception.status, 400)
        adds = self.rec.keys("POST", f"/v1/memories/{ns}")
        self.assertEqual(len(adds), 2)
        self.assertTrue(all(adds) and adds[0] != adds[1], "each add has its own Idempotency-Key")


if __name__ == "__main__":
    unittest.main()
