// Exercises every helper of the SDK against a live carryon server (CARRYON_URL, CARRYON_KEY, and
// BOB_KEY for a second user). Its agents: default (scripted), gated (scripted, write_file asks for
// approval) and weather (a model that calls the client tool get_weather). Asserts as it goes and
// prints what the Go test checks on the server afterwards, as one JSON line.
import assert from "node:assert/strict";
import { Carryon, CarryonError, ConnectionError, isCarryonError, type RunEvent } from "@carryon/sdk";

const baseUrl = process.env.CARRYON_URL!;
const apiKey = process.env.CARRYON_KEY!;
const out: Record<string, unknown> = {};

// A fetch that records every request, and that can lose the answer of a request after the server
// got it (the write is applied, the client sees a network error) or answer in place of the server.
type Fault = (url: string, init: RequestInit) => "lose" | Response | undefined;
const sent: { method: string; url: string; key: string | null }[] = [];
let fault: Fault | undefined;
const recording: typeof fetch = async (input, init = {}) => {
  const url = String(input);
  const headers = new Headers(init.headers);
  sent.push({ method: init.method ?? "GET", url, key: headers.get("Idempotency-Key") });
  const f = fault?.(url, init);
  if (f instanceof Response) return f;
  const res = await fetch(input, init);
  if (f === "lose") {
    await res.arrayBuffer();
    throw new TypeError("fetch failed (the test lost the answer)");
  }
  return res;
};
const client = new Carryon({ baseUrl, apiKey, fetch: recording, backoffMs: 50 });

// 1. Every write gets an Idempotency-Key, a new one per logical write; a write whose answer was
// lost is sent again with the same key and applied once.
const session = await client.sessions.create({ title: "sdk helpers", working_memory: { goal: "test the SDK" } });
let lost = 0;
fault = (url, init) => (init.method === "POST" && url.endsWith("/messages") && lost++ === 0 ? "lose" : undefined);
sent.length = 0;
const appended = await client.sessions.append(session.id, [{ role: "user", content: "the same words" }]);
const appendedAgain = await client.sessions.append(session.id, [{ role: "user", content: "the same words" }]);
fault = undefined;
const appends = sent.filter((r) => r.method === "POST" && r.url.endsWith("/messages"));
assert.equal(appends.length, 3, "the first append is sent twice, the second once");
assert.ok(appends[0].key && appends[0].key === appends[1].key, "the retry carries the first attempt's key");
assert.notEqual(appends[2].key, appends[0].key, "a new logical write gets a new key");
assert.equal(appended.messages[0].seq, 1);
assert.equal(appendedAgain.messages[0].seq, 2, "the retried append was applied once");
out.session = session.id;

// 2. Retries honour Retry-After (a 429 from in front of the server) and back off on a 5xx.
let refusals = 0;
fault = (url) =>
  url.endsWith("/v1/me") && refusals++ === 0
    ? new Response(JSON.stringify({ type: "about:blank", title: "Too many requests", status: 429, code: "too_many_requests", detail: "slow down" }), {
        status: 429,
        headers: { "Content-Type": "application/problem+json", "Retry-After": "1" },
      })
    : undefined;
let t0 = Date.now();
const me = await client.me();
fault = undefined;
assert.ok(Date.now() - t0 >= 950, `the retry after a 429 waited ${Date.now() - t0} ms, less than its Retry-After: 1`);
assert.equal(refusals, 2);
out.me = me.id;
const down = new Carryon({ baseUrl, apiKey, retries: 2, backoffMs: 10, fetch: async () => new Response("bad gateway", { status: 502 }) });
await assert.rejects(down.me(), (err) => isCarryonError(err, "internal") && err.status === 502);
const gone = new Carryon({ baseUrl: "http://127.0.0.1:9", apiKey, retries: 1, backoffMs: 10 });
await assert.rejects(gone.me(), (err) => err instanceof ConnectionError && err.attempts === 2);

// 3. Typed errors carry the problem's code: a missing session and another user's are the same 404.
await assert.rejects(client.sessions.get("sess_doesnotexist"), (err) => isCarryonError(err, "not_found") && err.status === 404);
const bob = new Carryon({ baseUrl, apiKey: process.env.BOB_KEY! });
await assert.rejects(bob.sessions.get(session.id), (err) => isCarryonError(err, "not_found"));
await assert.rejects(bob.sessions.append(session.id, [{ role: "user", content: "not mine" }]), (err) => isCarryonError(err, "not_found"));
await assert.rejects(client.sessions.append(session.id, [{ role: "user", content: "stale" }], { ifMatch: 1 }), (err) => {
  assert.ok(err instanceof CarryonError && err.code === "version_conflict" && err.status === 412, String(err));
  assert.equal(err.currentVersion, 3);
  return true;
});
await assert.rejects(client.sessions.append(session.id, [{ role: "robot" as "user", content: "x" }]), (err) => isCarryonError(err, "invalid_request") && /role/.test(err.detail));

// 4. update(session, fn): a read-modify-write with If-Match that re-reads on a conflict and applies fn again.
let calls = 0;
const updated = await client.update(session.id, async (wm) => {
  calls++;
  if (calls === 1) {
    // another tab writes between this read and this write
    const other = await client.sessions.memory(session.id);
    await client.sessions.patchMemory(session.id, { notes: ["from the other tab"] }, { ifMatch: other.version });
  }
  wm.next_action = "write the tests";
  wm.notes = [...((wm.notes as string[] | undefined) ?? []), "from this tab"];
});
assert.equal(calls, 2, "fn was applied again after the conflict");
assert.deepEqual(updated.working_memory, { goal: "test the SDK", next_action: "write the tests", notes: ["from the other tab", "from this tab"] });
// With a session already read, the first attempt uses its memory and version; here it is stale,
// so the update re-reads and applies fn to the current memory.
const staleView = await client.sessions.get(session.id, { messages: 0 });
await client.sessions.patchMemory(session.id, { owner: "tab C" });
const seenBy: unknown[] = [];
const fromView = await client.update(staleView, (wm) => {
  seenBy.push(wm.owner);
  wm.reviewed = true;
});
assert.deepEqual(seenBy, [undefined, "tab C"], "the first attempt used the session as read, the second the memory as re-read");
assert.equal(fromView.working_memory.owner, "tab C");
assert.equal(fromView.working_memory.reviewed, true);
await client.sessions.patchMemory(session.id, { owner: null, reviewed: null });
const before = await client.sessions.memory(session.id);
const unchanged = await client.update(session.id, () => {});
assert.equal(unchanged.version, before.version, "an update that changes nothing writes nothing");
assert.equal((await client.sessions.memory(session.id)).version, before.version);

// 5. Paging as async iterators.
for (let i = 0; i < 5; i++) await client.sessions.append(session.id, [{ role: "user", content: `message ${i}` }]);
let pages = 0;
for await (const page of client.sessions.messages(session.id, { limit: 2 }).pages()) {
  pages++;
  assert.ok(page.items.length <= 2);
}
const all = await client.sessions.messages(session.id, { limit: 2 }).toArray();
assert.deepEqual(all.map((m) => m.seq), [1, 2, 3, 4, 5, 6, 7]);
assert.equal(pages, 4);
const revisions = await client.sessions.memoryHistory(session.id, { limit: 1 }).toArray();
assert.ok(revisions.length >= 3, `${revisions.length} revisions`);
const diff = await client.sessions.memoryDiff(session.id, 0, updated.memory_version);
assert.ok(diff.changes.some((c) => c.path === "/next_action"), JSON.stringify(diff));
const redacted = await client.sessions.deleteMessage(session.id, 7);
assert.equal(redacted.message_count, 6);
assert.deepEqual((await client.sessions.messages(session.id).toArray()).map((m) => m.seq), [1, 2, 3, 4, 5, 6]);
const mine: string[] = [];
for await (const s of client.sessions.list({ limit: 1 })) mine.push(s.id);
assert.ok(mine.includes(session.id));

// 6. A run and its events: every event once, in order, to run.finished. A model delta may come as
// a preview (seq 0) before it is stored; the live stream then skips its stored copy.
const task = await client.sessions.create({});
const types: string[] = [];
const seqs: number[] = [];
let previews = "";
let previewCount = 0;
const finished = await client.runs.run(task.id, { message: "Task: plan a picnic: pick a park, then buy food, then invite friends" }, {
  onEvent: (e: RunEvent) => {
    types.push(e.type);
    if (e.seq) seqs.push(e.seq);
    else {
      previewCount++;
      previews += (e.data as { text?: string }).text ?? "";
    }
  },
});
assert.equal(finished.status, "succeeded", JSON.stringify(finished));
assert.equal(types.at(-1), "run.finished");
const stored: RunEvent[] = [];
for await (const e of client.runs.events(finished.id, { follow: false })) stored.push(e);
assert.deepEqual(stored.map((e) => e.seq), stored.map((_, i) => i + 1), "stored events 1, 2, … without gaps");
const skipped = stored.filter((e) => !seqs.includes(e.seq));
assert.deepEqual(seqs, stored.filter((e) => seqs.includes(e.seq)).map((e) => e.seq), "the live stream's events in order, none twice");
assert.ok(skipped.every((e) => e.type === "model.delta"), "only model deltas come as previews in place of their stored copies");
assert.equal(skipped.length, previewCount, "each preview in place of one stored delta");
assert.equal(previews, skipped.map((e) => (e.data as { text?: string }).text ?? "").join(""), "the previews said what the stored deltas say");
const after2: number[] = [];
for await (const e of client.runs.events(finished.id, { follow: false, after: 2 })) after2.push(e.seq);
assert.deepEqual(after2, stored.slice(2).map((e) => e.seq), "a stream after event 2 starts at 3");
// A stream whose connection breaks after every second event reconnects with Last-Event-ID and
// yields each event once.
const resumedFrom: (string | null)[] = [];
const cutting: typeof fetch = async (input, init = {}) => {
  const res = await fetch(input, init);
  if (!String(input).includes("/events") || !res.body) return res;
  resumedFrom.push(new Headers(init.headers).get("Last-Event-ID"));
  const reader = res.body.getReader();
  let frames = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) return controller.close();
      // forward up to the end of the second event, then break the connection
      const text = new TextDecoder().decode(value);
      let end = 0;
      for (let i = text.indexOf("\n\n"); i >= 0 && frames < 2; i = text.indexOf("\n\n", i + 2)) {
        frames++;
        end = i + 2;
      }
      if (frames < 2) return controller.enqueue(value);
      controller.enqueue(new TextEncoder().encode(text.slice(0, end)));
      await reader.cancel();
      controller.error(new TypeError("the test broke the connection"));
    },
  });
  return new Response(body, { status: res.status, headers: res.headers });
};
const flaky = new Carryon({ baseUrl, apiKey, fetch: cutting, backoffMs: 10 });
const resumed: number[] = [];
for await (const e of flaky.runs.events(finished.id)) resumed.push(e.seq);
assert.deepEqual(resumed, stored.map((e) => e.seq), "every event once across the broken connections");
assert.ok(resumedFrom.length >= stored.length / 2, `${resumedFrom.length} connections for ${stored.length} events`);
assert.equal(resumedFrom[0], null);
assert.ok(resumedFrom.slice(1).every((id, i) => Number(id) > Number(resumedFrom[i] ?? 0)), `each connection resumes after the last event: ${resumedFrom}`);
out.picnicRun = finished.id;
out.picnicEvents = stored.length;
out.picnicPreviews = previewCount;

// 7. Client tools: onToolCall runs the tool; its output goes back as the tool's result.
const weather = await client.sessions.create({ agent: "weather" });
const toolCalls: unknown[] = [];
const withTool = await client.runs.run(weather.id, {
  message: "What is the weather in Oslo?",
  tools: [{ name: "get_weather", description: "The weather in a city.", parameters: { type: "object", properties: { city: { type: "string" } } } }],
}, {
  onToolCall: (call) => {
    toolCalls.push({ name: call.name, arguments: call.arguments });
    return "sunny in Oslo";
  },
});
assert.deepEqual(toolCalls, [{ name: "get_weather", arguments: { city: "Oslo" } }]);
assert.equal(withTool.status, "succeeded");
assert.equal(withTool.reply, "The weather: sunny in Oslo");
out.toolRun = withTool.id;

// 8. Approvals: approve with edited arguments, and reject with a reason.
const picnic = "Task: plan a picnic: pick a park, then buy food, then invite friends";
const gatedA = await client.sessions.create({ agent: "gated" });
const approved = await client.runs.run(gatedA.id, { message: picnic }, {
  onApproval: (action) => {
    assert.equal(action.tool, "write_file");
    return { decision: "approve", arguments: { ...action.args, content: "# Picnic\n\nThe plan, as the user wrote it.\n" } };
  },
});
assert.equal(approved.status, "succeeded", JSON.stringify(approved));
const approvedActions = await client.runs.actions(approved.id).toArray();
assert.ok(approvedActions.some((a) => a.tool === "write_file" && a.approval === "edited" && a.status === "succeeded"), JSON.stringify(approvedActions));
const gatedB = await client.sessions.create({ agent: "gated" });
const waiting = await client.runs.run(gatedB.id, { message: picnic }); // no handler: returns the waiting run
assert.equal(waiting.status, "waiting_approval");
// A stream of a waiting run stays open; aborting its signal ends it, without a reconnect.
const ac = new AbortController();
const beforeAbort: number[] = [];
await assert.rejects(
  (async () => {
    for await (const e of client.runs.events(waiting.id, { signal: ac.signal })) {
      beforeAbort.push(e.seq);
      if (e.type === "run.waiting_approval") ac.abort();
    }
  })(),
  (err) => (err as Error).name === "AbortError",
);
assert.equal(beforeAbort.length > 0, true);
await client.runs.reject(waiting.id, waiting.pending_action!.id, "no files today");
const rejected = await client.runs.follow(waiting.id);
assert.equal(rejected.status, "succeeded");
const rejectedActions = await client.runs.actions(rejected.id).toArray();
assert.ok(rejectedActions.some((a) => a.tool === "write_file" && a.approval === "rejected" && /no files today/.test(a.result ?? "")), JSON.stringify(rejectedActions));
out.approvedSession = gatedA.id;
out.rejectedSession = gatedB.id;

// 9. Long-term memory: put, get, If-Match, search and list as pages, delete.
const item = await client.memories.put("prefs", "editor", { value: "vim", text: "prefers the vim editor with a dark theme" });
assert.equal(item.version, 1);
await client.memories.put("prefs", "shell", { value: "fish", text: "uses the fish shell" });
await client.memories.put("projects.alpha", "lang", { value: { name: "go" }, text: "alpha is written in go" });
await assert.rejects(client.memories.put("prefs", "editor", { value: "emacs" }, { ifMatch: 7 }), (err) => isCarryonError(err, "version_conflict") && (err as CarryonError).currentVersion === 1);
const replaced = await client.memories.put("prefs", "editor", { value: "helix", text: "prefers the helix editor" }, { ifMatch: 1 });
assert.equal(replaced.version, 2);
assert.equal((await client.memories.get("prefs", "editor"))?.value, "helix");
const found = await client.memories.search("editor shell", { namespace: "prefs", limit: 1 }).toArray();
assert.deepEqual(found.map((m) => m.key).sort(), ["editor", "shell"]);
const listed = await client.memories.list({ limit: 1 }).toArray();
assert.deepEqual(listed.map((m) => `${m.namespace}/${m.key}`), ["prefs/editor", "prefs/shell", "projects.alpha/lang"]);
assert.equal(await bob.memories.get("prefs", "editor"), undefined, "another user's item is not found");
let counts = 0;
const counted = await client.memories.update("stats", "visits", async (value) => {
  counts++;
  if (counts === 1) await client.memories.put("stats", "visits", { value: 10 }); // another writer gets in first
  return { value: ((value as number | undefined) ?? 0) + 1 };
});
assert.equal(counts, 2, "fn was applied again after the conflict");
assert.equal(counted.value, 11);
await client.memories.delete("prefs", "shell");
assert.equal(await client.memories.get("prefs", "shell"), undefined);

// 10. Facts added under keys the server chooses, consolidated inside the write (this server has no
// embeddings: a near duplicate is the same text but for case and spaces), the earlier values
// they replaced, and search modes, a score floor and a value filter.
let addsLost = 0;
fault = (url, init) => (init.method === "POST" && url.endsWith("/v1/memories/facts") && addsLost++ === 0 ? "lose" : undefined);
sent.length = 0;
const fact = await client.memories.add("facts", "works from Lisbon on Fridays");
fault = undefined;
const adds = sent.filter((r) => r.method === "POST" && r.url.endsWith("/v1/memories/facts"));
assert.equal(adds.length, 2, "the add whose answer was lost is sent again");
assert.ok(adds[0].key && adds[0].key === adds[1].key, "the retried add carries the first attempt's key");
assert.ok(fact.key.startsWith("m_") && fact.version === 1 && fact.value === "works from Lisbon on Fridays", JSON.stringify(fact));
assert.equal(fact.consolidated_into, undefined, "the retry answered the first add, not a consolidation into it");
const again = await client.memories.add("facts", "works from Lisbon on Fridays");
assert.equal(again.consolidated_into, fact.key, "the same fact again is consolidated into the item");
assert.equal(again.similarity, 1);
assert.equal(again.version, 1, "the same fact again changes nothing");
assert.equal(again.supersedes, undefined);
const moved = await client.memories.add("facts", "Works from  Lisbon on Fridays", { value: { city: "Lisbon", days: ["fri"] }, ttlSeconds: 3600 });
assert.equal(moved.consolidated_into, fact.key);
assert.equal(moved.version, 2);
assert.ok(moved.expires_at, "the add's ttl");
assert.deepEqual(moved.value, { city: "Lisbon", days: ["fri"] });
assert.deepEqual([moved.supersedes?.version, moved.supersedes?.value], [1, "works from Lisbon on Fridays"]);
const earlier = await client.memories.versions("facts", fact.key);
assert.deepEqual(earlier.map((v) => [v.version, v.value, v.text]), [[1, "works from Lisbon on Fridays", "works from Lisbon on Fridays"]]);
assert.deepEqual(await client.memories.list({ namespace: "facts" }).toArray().then((items) => items.map((m) => m.key)), [fact.key], "one item for the three adds");
await assert.rejects(client.memories.versions("facts", "m_doesnotexist"), (err) => isCarryonError(err, "not_found"));
await assert.rejects(bob.memories.versions("facts", fact.key), (err) => isCarryonError(err, "not_found"), "another user's item has no versions to read");
await assert.rejects(client.memories.add("facts", ""), (err) => isCarryonError(err, "invalid_request") && /text/.test(err.detail));
await assert.rejects(client.memories.add("search", "a fact"), (err) => err instanceof TypeError && /search/.test(err.message));

await client.memories.put("drinks", "green", { value: { kind: "preference", drink: "tea" }, text: "likes green tea" });
await client.memories.put("drinks", "black", { value: { kind: "habit", drink: "tea" }, text: "drinks black tea" });
const hybrid = await client.memories.search("green tea", { namespace: "drinks" }).page();
assert.equal(hybrid.mode, "keyword", "a hybrid search on a server without embeddings says it ranked by keyword");
assert.deepEqual(hybrid.items.map((m) => m.key), ["green", "black"], "the item with both words first");
assert.equal(hybrid.items[0].score, 1, "the best keyword match scores 1");
assert.ok(hybrid.items[1].score! < 1 && hybrid.items[1].score! > 0, JSON.stringify(hybrid));
assert.equal(hybrid.items[0].scores?.keyword, 1, "each ranking's part of the score");
const floored = await client.memories.search("green tea", { namespace: "drinks", minScore: 1 }).toArray();
assert.deepEqual(floored.map((m) => m.key), ["green"], "min_score leaves out the lower scores");
const keyword = await client.memories.search("tea", { namespace: "drinks", mode: "keyword", filter: { kind: "habit" } }).page();
assert.equal(keyword.mode, "keyword");
assert.deepEqual(keyword.items.map((m) => m.key), ["black"], "the filter keeps the items whose value has kind habit");
await assert.rejects(client.memories.search("what does she drink", { mode: "semantic" }).toArray(), (err) => {
  assert.ok(isCarryonError(err, "invalid_request") && err.status === 400 && /embeddings/.test(err.detail), String(err));
  return true;
});

// Usage and budgets: a session's budget on create and update, its usage per day, the caller's, and
// an admin's view and setting of another user's budgets.
const budgeted = await client.sessions.create({ title: "budgeted", budget: { tokens: 1000 } });
assert.deepEqual(budgeted.budget, { tokens: 1000, on_exceed: "pause" });
const raised = await client.sessions.update(budgeted.id, { budget: { tokens: 5000, usd: 2.5, on_exceed: "fail" } });
assert.deepEqual(raised.budget, { tokens: 5000, usd: 2.5, on_exceed: "fail" });
const today = new Date().toISOString().slice(0, 10);
const su = await client.sessions.usage(budgeted.id, { days: 2 });
assert.deepEqual([su.session_id, su.days.length, su.days[1].date, su.spend.tokens, su.budget?.tokens], [budgeted.id, 2, today, 0, 5000]);
assert.equal((await client.sessions.usage(budgeted.id)).days.length, 30, "30 days by default");
const myUsage = await client.usage({ days: 3 });
assert.deepEqual([myUsage.days.length, myUsage.days[2].date, myUsage.user_id], [3, today, me.id]);
assert.deepEqual(Object.keys(myUsage.days[0]).sort(), ["cached_tokens", "calls", "date", "input_tokens", "output_tokens", "tokens", "usd"]);
await assert.rejects(client.usage({ days: 367 }), (err) => isCarryonError(err, "invalid_request") && /days/.test(err.detail));
const bobMe = await bob.me();
const set = await client.users.setBudget(bobMe.id, { day: { tokens: 10 }, month: { usd: 1 } });
assert.deepEqual(set, { day: { tokens: 10, on_exceed: "pause" }, month: { usd: 1, on_exceed: "pause" } });
assert.deepEqual(await client.users.budget(bobMe.id), set);
const theirs = await client.users.usage(bobMe.name, { days: 1 });
assert.deepEqual([theirs.user_id, theirs.days.length, theirs.budget], [bobMe.id, 1, set]);
await assert.rejects(bob.users.budget(bobMe.id), (err) => isCarryonError(err, "forbidden"));
await assert.rejects(bob.sessions.usage(budgeted.id), (err) => isCarryonError(err, "not_found"));

console.log(JSON.stringify(out));
