"""The sync client against a live server: every route group and every helper."""

from __future__ import annotations

import time
import unittest
import uuid

import carryon
from carryon import Carryon

from .env import PICNIC, WEATHER_TOOL, Recorder, bob_key, client, control, needs_server, seen, URL


@needs_server
class SyncSessions(unittest.TestCase):
    def setUp(self) -> None:
        self.rec = Recorder()
        self.c = client(self.rec)
        self.addCleanup(self.c.close)

    def test_lifecycle_and_paging(self) -> None:
        c = self.c
        s = c.sessions.create(title="refactor the parser", working_memory={"goal": "refactor the parser"})
        self.assertEqual(s["version"], 1)
        self.assertEqual(c.get_session(s["id"])["working_memory"], {"goal": "refactor the parser"})
        for i in range(5):
            c.messages.append(s["id"], f"message {i}")
        texts = [m["content"] for m in c.messages.list(s["id"], page_size=2)]
        self.assertEqual(texts, [f"message {i}" for i in range(5)], "the iterator pages through every message once")
        self.assertEqual(c.sessions.patch(s["id"], title="renamed")["title"], "renamed")
        fork = c.sessions.fork(s["id"], at_version=3, title="fork")
        self.assertEqual([m["content"] for m in c.messages.list(fork["id"])], ["message 0", "message 1"])
        c.sessions.close(s["id"])
        with self.assertRaises(carryon.SessionClosed) as e:
            c.messages.append(s["id"], "after the close")
        self.assertEqual((e.exception.status, e.exception.code), (409, "session_closed"))
        c.sessions.restore(s["id"])
        c.messages.append(s["id"], "after the restore")
        mine = {x["id"] for x in c.sessions.list(page_size=1)}
        self.assertTrue({s["id"], fork["id"]} <= mine, "the session listing pages through every session")
        c.sessions.delete(s["id"])
        with self.assertRaises(carryon.NotFound):
            c.sessions.get(s["id"])
        deleted = c.messages.delete(fork["id"], 1)
        self.assertEqual(deleted["message_count"], 1)

    def test_every_write_has_its_own_key(self) -> None:
        c = self.c
        s = c.sessions.create()
        c.messages.append(s["id"], "one")
        c.messages.append(s["id"], "one")  # the same text twice is two writes
        c.memory.patch(s["id"], {"goal": "g"})
        c.sessions.close(s["id"])
        c.sessions.delete(s["id"])
        writes = [r for r in self.rec.requests if r["method"] != "GET"]
        self.assertEqual(len(writes), 6)
        keys = [r["key"] for r in writes]
        self.assertTrue(all(keys), f"a write without an Idempotency-Key: {writes}")
        self.assertEqual(len(set(keys)), len(keys), "two logical writes shared a key")

    def test_request_id_replays(self) -> None:
        c = self.c
        s = c.sessions.create()
        first = c.messages.append(s["id"], "run the tests", request_id="rid-" + s["id"])
        again = c.messages.append(s["id"], "run the tests", request_id="rid-" + s["id"])
        self.assertEqual(first, again)
        self.assertEqual(len(list(c.messages.list(s["id"]))), 1, "a repeated request id appended twice")
        with self.assertRaises(carryon.IdempotencyKeyReused) as e:
            c.messages.append(s["id"], "something else", request_id="rid-" + s["id"])
        self.assertEqual(e.exception.status, 422)

    def test_retry_after_429_with_the_same_key(self) -> None:
        c = self.c
        s = c.sessions.create()
        path = f"/v1/sessions/{s['id']}/messages"
        control(f"/_test/fail?path={path}&n=2")
        began = time.monotonic()
        out = c.messages.append(s["id"], "once")
        took = time.monotonic() - began
        keys = self.rec.keys("POST", path)
        self.assertEqual(len(keys), 3, "two 429s and the answer")
        self.assertEqual(len(set(keys)), 1, "the retries changed the Idempotency-Key")
        self.assertEqual(seen(keys[0]), 3)
        self.assertGreaterEqual(took, 1.9, "Retry-After: 1 was not honoured")
        self.assertEqual(out["version"], 2)
        self.assertEqual(len(list(c.messages.list(s["id"]))), 1)
        # A client that gives up answers the typed error of the last answer.
        control(f"/_test/fail?path={path}&n=2")
        with client(retry=carryon.Retry(attempts=2)) as impatient:
            with self.assertRaises(carryon.TooManyRequests) as e:
                impatient.messages.append(s["id"], "never")
        self.assertEqual((e.exception.status, e.exception.retry_after), (429, 1.0))

    def test_update_rereads_on_conflict(self) -> None:
        c = self.c
        s = c.sessions.create(working_memory={"count": 0})
        calls = []

        def bump(cur: carryon.Session) -> dict:
            calls.append(cur["version"])
            if len(calls) == 1:  # another tab writes between our read and our write
                c.memory.patch(s["id"], {"count": cur["working_memory"]["count"] + 1})
            return {"count": cur["working_memory"]["count"] + 1}

        mem = c.sessions.update(s["id"], bump)
        self.assertEqual(mem["working_memory"]["count"], 2, "a lost update")
        self.assertEqual(calls, [1, 2], "fn was not applied again to the session as re-read")
        patches = [r for r in self.rec.requests if r["method"] == "PATCH"]
        self.assertEqual(len({r["key"] for r in patches}), 3, "each re-applied write needs its own key")
        # with_version: any write, here an append with If-Match.
        stale = c.sessions.get(s["id"])["version"]
        c.messages.append(s["id"], "tab A")
        with self.assertRaises(carryon.VersionConflict) as e:
            c.messages.append(s["id"], "tab B", if_match=stale)
        self.assertEqual((e.exception.status, e.exception.current_version), (412, stale + 1))
        out = c.sessions.with_version(s["id"], lambda cur: c.messages.append(s["id"], "tab B", if_match=cur["version"]))
        self.assertEqual(out["version"], stale + 2)
        self.assertIsNone(c.sessions.update(s["id"], lambda cur: None)["working_memory"].get("missing"))

    def test_typed_errors(self) -> None:
        c = self.c
        s = c.sessions.create()
        with self.assertRaises(carryon.NotFound) as e:
            c.sessions.get("sess_doesnotexist")
        self.assertEqual((e.exception.status, e.exception.code), (404, "not_found"))
        with Carryon(URL, bob_key()) as bob:
            with self.assertRaises(carryon.NotFound) as other:
                bob.sessions.get(s["id"])
            self.assertEqual(other.exception.code, "not_found", "another user's session is a 404 like a missing one")
            with self.assertRaises(carryon.Forbidden):
                bob.users.create("eve")
        with self.assertRaises(carryon.InvalidRequest) as bad:
            c.messages.append(s["id"], [{"role": "bogus", "content": "x"}])
        self.assertIn("role", bad.exception.detail)
        self.assertEqual(c.sessions.get(s["id"])["version"], 1, "a refused write changed something")
        with Carryon(URL, "ck_wrong") as wrong, self.assertRaises(carryon.Unauthorized):
            wrong.me()

    def test_working_memory_versions(self) -> None:
        c = self.c
        s = c.sessions.create(working_memory={"goal": "a"})
        c.memory.patch(s["id"], {"next_action": "b"})
        c.memory.patch(s["id"], {"goal": None})
        m = c.memory.get(s["id"])
        self.assertEqual((m["working_memory"], m["memory_version"]), ({"next_action": "b"}, 3))
        revs = [r["memory_version"] for r in c.memory.history(s["id"], page_size=1)]
        self.assertEqual(revs, [3, 2, 1])
        diff = c.memory.diff(s["id"], 1, 3)
        self.assertEqual(sorted(ch["path"] for ch in diff["changes"]), ["/goal", "/next_action"])

    def test_long_term_memory(self) -> None:
        c = self.c
        ns = "sdk" + uuid.uuid4().hex[:8]
        item = c.memories.put(ns, "editor", "vim", text="prefers the vim editor")
        self.assertEqual(item["version"], 1)
        with self.assertRaises(carryon.VersionConflict):
            c.memories.put(ns, "editor", "emacs", if_match=0)
        for k in ("a", "b", "c"):
            c.memories.put(ns, k, k, text=f"note {k} about gardening")
        self.assertEqual([i["key"] for i in c.memories.list(ns, page_size=2)], ["a", "b", "c", "editor"])
        self.assertEqual({i["key"] for i in c.memories.search("gardening", namespace=ns, page_size=1)}, {"a", "b", "c"})
        c.memories.delete(ns, "editor")
        with self.assertRaises(carryon.NotFound):
            c.memories.get(ns, "editor")

    def test_long_term_memory_add_versions_and_search_modes(self) -> None:
        # The server has no embeddings: a near duplicate is the same text but for case and spaces,
        # and search ranks by keyword.
        c = self.c
        ns = "facts" + uuid.uuid4().hex[:8]
        path = f"/v1/memories/{ns}"
        control(f"/_test/fail?path={path}&n=1")
        fact = c.memories.add(ns, "works from Lisbon on Fridays")
        keys = self.rec.keys("POST", path)
        self.assertEqual((len(keys), len(set(keys)), seen(keys[0])), (2, 1, 2), "the retried add changed its Idempotency-Key")
        self.assertTrue(fact["key"].startswith("m_"), fact)
        self.assertEqual((fact["version"], fact["value"], fact.get("consolidated_into")), (1, "works from Lisbon on Fridays", None))
        again = c.memories.add(ns, "works from Lisbon on Fridays")
        self.assertEqual((again["consolidated_into"], again["similarity"], again["version"]), (fact["key"], 1, 1),
                         "the same fact again is consolidated into the item and changes nothing")
        self.assertNotIn("supersedes", again)
        self.assertEqual(c.memories.versions(ns, fact["key"]), [])
        moved = c.memories.add(ns, "Works from  Lisbon on Fridays", value={"city": "Lisbon"}, ttl_seconds=3600)
        self.assertEqual((moved["consolidated_into"], moved["version"], moved["value"]), (fact["key"], 2, {"city": "Lisbon"}))
        self.assertIn("expires_at", moved)
        self.assertEqual((moved["supersedes"]["version"], moved["supersedes"]["value"]), (1, "works from Lisbon on Fridays"))
        earlier = c.memories.versions(ns, fact["key"])
        self.assertEqual([(v["version"], v["value"], v["text"]) for v in earlier],
                         [(1, "works from Lisbon on Fridays", "works from Lisbon on Fridays")])
        self.assertEqual([i["key"] for i in c.memories.list(ns)], [fact["key"]], "three adds, one item")
        with self.assertRaises(carryon.NotFound):
            c.memories.versions(ns, "m_doesnotexist")
        with Carryon(URL, bob_key()) as bob, self.assertRaises(carryon.NotFound):
            bob.memories.versions(ns, fact["key"])
        with self.assertRaises(carryon.InvalidRequest) as empty:
            c.memories.add(ns, "")
        self.assertIn("text", empty.exception.detail)
        with self.assertRaises(ValueError):
            c.memories.add("search", "a fact")

        c.memories.put(ns, "green", {"kind": "preference", "drink": "tea"}, text="likes green tea")
        c.memories.put(ns, "black", {"kind": "habit", "drink": "tea"}, text="drinks black tea")
        page = c.memories.search_page("green tea", namespace=ns, mode="hybrid")
        self.assertEqual(page["mode"], "keyword", "a hybrid search without embeddings says it ranked by keyword")
        self.assertEqual([i["key"] for i in page["items"]], ["green", "black"])
        self.assertEqual((page["items"][0]["score"], page["items"][0]["scores"]["keyword"]), (1, 1))
        self.assertLess(page["items"][1]["score"], 1)
        self.assertEqual([i["key"] for i in c.memories.search("green tea", namespace=ns, min_score=1)], ["green"])
        self.assertEqual([i["key"] for i in c.memories.search("tea", namespace=ns, mode="keyword", filter={"kind": "habit"})],
                         ["black"])
        first = c.memories.search_page("tea", namespace=ns, limit=1)
        rest = c.memories.search_page("tea", namespace=ns, limit=1, cursor=first["next_cursor"])
        self.assertEqual({first["items"][0]["key"], rest["items"][0]["key"]}, {"green", "black"})
        with self.assertRaises(carryon.InvalidRequest) as semantic:
            c.memories.search_page("what does she drink", mode="semantic")
        self.assertEqual(semantic.exception.status, 400)
        self.assertIn("embeddings", semantic.exception.detail)
        with self.assertRaises(carryon.InvalidRequest):
            list(c.memories.search("what does she drink", mode="semantic"))
        searches = [r for r in self.rec.requests if r["path"] == "/v1/memories/search"]
        self.assertTrue(searches and not any(r["key"] for r in searches), "a search is a read: no Idempotency-Key")

    def test_users_and_keys(self) -> None:
        c = self.c
        me = c.me()
        self.assertTrue(me["admin"])
        made = c.users.create("carol-" + uuid.uuid4().hex[:8])
        name = made["user"]["name"]
        self.assertIn(name, {u["name"] for u in c.users.list(page_size=1)})
        key = c.users.create_key(name)
        self.assertEqual(len(list(c.users.keys(name))), 2)
        with Carryon(URL, key["secret"]) as carol:
            self.assertEqual(carol.me()["name"], name)
            c.users.revoke_key(key["key"]["id"])
            with self.assertRaises(carryon.Unauthorized):
                carol.me()

    def test_usage_and_budgets(self) -> None:
        c = self.c
        s = c.sessions.create(title="budgeted", budget={"tokens": 1000})
        self.assertEqual(s["budget"], {"tokens": 1000, "on_exceed": "pause"})
        s = c.sessions.patch(s["id"], budget={"tokens": 5000, "usd": 2.5, "on_exceed": "fail"})
        self.assertEqual(s["budget"], {"tokens": 5000, "usd": 2.5, "on_exceed": "fail"})
        today = time.strftime("%Y-%m-%d", time.gmtime())
        u = c.sessions.usage(s["id"], days=2)
        self.assertEqual((u["session_id"], len(u["days"]), u["days"][-1]["date"], u["spend"]["tokens"], u["budget"]["tokens"]),
                         (s["id"], 2, today, 0, 5000))
        self.assertEqual(len(c.sessions.usage(s["id"])["days"]), 30)
        self.assertNotIn("budget", c.sessions.patch(s["id"], budget={}))
        mine = c.users.my_usage(days=3)
        self.assertEqual((len(mine["days"]), mine["days"][-1]["date"], mine["user_id"]), (3, today, c.me()["id"]))
        self.assertEqual(set(mine["days"][0]), {"date", "tokens", "input_tokens", "output_tokens", "cached_tokens", "calls", "usd"})
        with self.assertRaises(carryon.InvalidRequest):
            c.users.my_usage(days=367)
        name = c.users.create("dora-" + uuid.uuid4().hex[:8])["user"]["name"]
        got = c.users.set_budget(name, day={"tokens": 10}, month={"usd": 1})
        self.assertEqual(got, {"day": {"tokens": 10, "on_exceed": "pause"}, "month": {"usd": 1, "on_exceed": "pause"}})
        self.assertEqual(c.users.budget(name), got)
        theirs = c.users.usage(name, days=1)
        self.assertEqual((len(theirs["days"]), theirs["budget"], theirs["today"]["tokens"]), (1, got, 0))
        with Carryon(URL, bob_key()) as bob:
            with self.assertRaises(carryon.Forbidden):
                bob.users.budget(name)
            with self.assertRaises(carryon.NotFound):
                bob.sessions.usage(s["id"])


@needs_server
class SyncRuns(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.addCleanup(self.c.close)

    def test_events_and_journal(self) -> None:
        c = self.c
        s = c.sessions.create()
        run = c.runs.start(s["id"], PICNIC)
        live = list(c.runs.events(run["id"]))
        stored = list(c.runs.events(run["id"], follow=False))  # every stored event, the run being over
        self.assertEqual([e.seq for e in stored], list(range(1, len(stored) + 1)), "seqs with a gap or a repeat")
        # Live, each model delta comes once: as its preview, or as its stored copy.
        deltas = lambda evs: [e.data["text"] for e in evs if e.type == "model.delta"]
        self.assertEqual(deltas(live), deltas(stored))
        self.assertEqual([e for e in live if not e.preview and e.type != "model.delta"],
                         [e for e in stored if e.type != "model.delta"])
        self.assertEqual((stored[0].type, stored[-1].type), ("run.queued", "run.finished"))
        self.assertEqual(c.runs.get(run["id"])["status"], "succeeded")
        tail = [e.seq for e in c.runs.events(run["id"], after=3, follow=False)]
        self.assertEqual(tail, list(range(4, len(stored) + 1)), "after= resumes after that seq")
        self.assertIn(run["id"], [r["id"] for r in c.runs.list(s["id"], page_size=1)])
        self.assertIn("write_file", [a["tool"] for a in c.runs.actions(run["id"], page_size=1)])
        self.assertEqual(c.sessions.get(s["id"])["working_memory"]["next_action"], "Pick a park")

    def test_start_retried_starts_one_run(self) -> None:
        c = self.c
        s = c.sessions.create()
        a = c.runs.start(s["id"], PICNIC, request_id="start-" + s["id"])
        b = c.runs.start(s["id"], PICNIC, request_id="start-" + s["id"])
        self.assertEqual(a["id"], b["id"])
        c.runs.wait(a["id"])
        self.assertEqual(len(list(c.runs.list(s["id"]))), 1)

    def test_client_tools(self) -> None:
        c = self.c
        s = c.sessions.create(agent="weather")
        calls = []

        def weather(call: carryon.ToolCall) -> str:
            calls.append(call)
            return f"sunny in {call['arguments']['city']}"

        run = c.run(s["id"], "Weather in Paris?", tools=[WEATHER_TOOL], on_tool_call=weather)
        self.assertEqual((run["status"], run.get("reply")), ("succeeded", "The weather: sunny in Paris"))
        self.assertEqual([x["name"] for x in calls], ["get_weather"])
        # Without on_tool_call the run is answered as it waits, and may be answered by hand.
        waiting = c.run(s["id"], "Weather in Paris again?", tools=[WEATHER_TOOL])
        self.assertEqual(waiting["status"], "requires_action")
        call = waiting["required_action"]["tool_calls"][0]
        c.runs.submit_tool_outputs(waiting["id"], {call["call_id"]: "rain"})
        self.assertEqual(c.runs.wait(waiting["id"])["reply"], "The weather: rain")

    def test_approvals(self) -> None:
        c = self.c
        s = c.sessions.create(agent="careful")
        seen_actions = []

        def edit(action: dict) -> dict:
            seen_actions.append(action)
            return dict(action["args"], content="approved with an edit\n")

        run = c.run(s["id"], PICNIC, on_approval=edit)
        self.assertEqual(run["status"], "succeeded")
        self.assertEqual(seen_actions[0]["tool"], "write_file")
        approvals = [a.get("approval") for a in c.runs.actions(run["id"]) if a["tool"] == "write_file"]
        self.assertEqual(approvals, ["edited"])
        s2 = c.sessions.create(agent="careful")
        run = c.run(s2["id"], PICNIC, on_approval=lambda action: "no files today")
        self.assertEqual(run["status"], "succeeded")
        results = [a.get("result", "") for a in c.runs.actions(run["id"]) if a.get("approval") == "rejected"]
        self.assertTrue(results and "no files today" in results[0], results)

    def test_cancel(self) -> None:
        c = self.c
        s = c.sessions.create(agent="careful")
        run = c.run(s["id"], PICNIC)  # waits for an approval: no on_approval
        self.assertEqual(run["status"], "waiting_approval")
        with self.assertRaises(carryon.SessionBusy) as e:
            c.runs.start(s["id"], "continue the task")
        self.assertEqual((e.exception.status, e.exception.active_run_id), (409, run["id"]))
        c.runs.cancel(run["id"])
        self.assertEqual(c.runs.wait(run["id"])["status"], "cancelled")

    def test_chat(self) -> None:
        c = self.c
        turn = c.chat(PICNIC)
        self.assertEqual(turn["status"], "succeeded")
        again = c.chat("continue the task", session_id=turn["session_id"])
        self.assertIn("Goal: plan a picnic", again["reply"])


if __name__ == "__main__":
    unittest.main()
