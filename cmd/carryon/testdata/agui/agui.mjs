// The AG-UI client (@ag-ui/client's HttpAgent, pinned in .ci/npm) against `carryon serve`'s
// POST /v1/ag-ui. Run by TestAGUIClientOnServe with CARRYON_URL, CARRYON_KEY (alice) and
// BOB_KEY; it prints one JSON object of what it saw, which the Go test checks, and exits 1 on a
// failed check of its own.
import { HttpAgent } from "@ag-ui/client";
import jsonpatch from "fast-json-patch";
import { randomUUID } from "node:crypto";

const url = process.env.CARRYON_URL;
const auth = (key) => ({ Authorization: `Bearer ${key}` });

function fail(msg) {
  console.error(msg);
  process.exit(1);
}

// run runs the agent once and returns the events it received, in order.
async function run(agent, params = {}) {
  const events = [];
  await agent.runAgent({ runId: randomUUID(), ...params }, { onEvent: ({ event }) => { events.push(event); } });
  return events;
}

// stateOf applies the run's STATE_SNAPSHOT and STATE_DELTA events with fast-json-patch.
function stateOf(events) {
  let doc;
  for (const e of events) {
    if (e.type === "STATE_SNAPSHOT") doc = structuredClone(e.snapshot);
    if (e.type === "STATE_DELTA") doc = jsonpatch.applyPatch(doc, e.delta, true, false).newDocument;
  }
  return doc;
}

const text = (events) => events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
const sessionOf = (events) => {
  const snap = events.find((e) => e.type === "MESSAGES_SNAPSHOT");
  return snap.messages[0].id.split(":")[0];
};

async function get(path, key) {
  const r = await fetch(url + path, { headers: auth(key) });
  if (!r.ok) fail(`GET ${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

const out = {};

// 1. A new thread (HttpAgent's own threadId): state in, a memory change out.
const agent = new HttpAgent({ url: url + "/v1/ag-ui", headers: auth(process.env.CARRYON_KEY), initialState: { notes: "draft" } });
agent.addMessage({ id: randomUUID(), role: "user", content: "remember ship it" });
const first = await run(agent);
out.firstTypes = first.map((e) => e.type);
out.firstText = text(first);
out.firstSnapshot = first.find((e) => e.type === "STATE_SNAPSHOT").snapshot;
const session = sessionOf(first);
out.session = session;
const native = await get(`/v1/sessions/${session}/memory`, process.env.CARRYON_KEY);
out.patched = stateOf(first);
out.native = native.working_memory;
out.agentState = agent.state;
out.threadMessages = agent.messages.length;

// 2. The same agent, a second turn: only the new message is appended.
agent.addMessage({ id: randomUUID(), role: "user", content: "hello" });
const second = await run(agent);
out.secondText = text(second);

// 3. A client tool round trip on that thread.
const tools = [{ name: "get_weather", description: "The weather of a city.", parameters: { type: "object", properties: { city: { type: "string" } } } }];
agent.addMessage({ id: randomUUID(), role: "user", content: "what is the weather?" });
const third = await run(agent, { tools });
const finished = third.find((e) => e.type === "RUN_FINISHED");
out.pending = finished?.outcome?.pendingToolCallIds ?? [];
const call = third.find((e) => e.type === "TOOL_CALL_START");
out.toolName = call?.toolCallName;
const args = third.filter((e) => e.type === "TOOL_CALL_ARGS").map((e) => e.delta).join("");
if (JSON.parse(args).city !== "Oslo") fail(`tool arguments ${args}`);
agent.addMessage({ id: randomUUID(), role: "tool", toolCallId: call.toolCallId, content: "sunny in Oslo" });
const fourth = await run(agent, { tools });
out.weather = text(fourth);
out.fourthLast = fourth[fourth.length - 1].type;
out.messages = (await get(`/v1/sessions/${session}/messages`, process.env.CARRYON_KEY)).items.map((m) => m.role + ":" + m.content);

// 4. Bob on alice's thread: refused with a 404 before any event.
const bob = new HttpAgent({ url: url + "/v1/ag-ui", headers: auth(process.env.BOB_KEY), threadId: session });
bob.addMessage({ id: randomUUID(), role: "user", content: "let me in" });
try {
  const got = await run(bob);
  out.bob = { events: got.map((e) => e.type) };
} catch (e) {
  out.bob = { status: e.status, code: e.payload?.error?.code };
}

console.log(JSON.stringify(out));
