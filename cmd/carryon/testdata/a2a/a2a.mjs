// Drives carryon's A2A front door with the official A2A JavaScript SDK (@a2a-js/sdk, pinned in
// .ci/npm). Usage: node a2a.mjs main | start-slow | resubscribe TASK_ID. Reads CARRYON_URL,
// CARRYON_KEY and A2A_CLIENT (the path of the SDK's client module); prints one JSON object.
import { pathToFileURL } from "node:url";

const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, DefaultAgentCardResolver } =
  await import(pathToFileURL(process.env.A2A_CLIENT).href);

const base = process.env.CARRYON_URL;
const key = process.env.CARRYON_KEY;
const authed = (input, init = {}) =>
  fetch(input, { ...init, headers: { ...(init.headers || {}), Authorization: `Bearer ${key}` } });

// client makes an SDK client from the card at base+path (no key is sent for the card).
async function client(path) {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: authed })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }),
  }));
  return factory.createFromUrl(base + path);
}

const ROLE_USER = 1;
let n = 0;
const msg = (text, extra = {}) => ({
  messageId: `msg-${process.pid}-${++n}`, role: ROLE_USER,
  parts: [{ content: { $case: "text", value: text } }], ...extra,
});
const textOf = (parts) => (parts || []).filter((p) => p.content?.$case === "text").map((p) => p.content.value).join("");
const replyOf = (task) => textOf(task.artifacts?.find((a) => a.artifactId === "reply")?.parts);

// collect reads a stream to its end: the kinds of its events, the last state, the reply as the
// artifact updates build it, and chunks: the reply from the task's snapshot and the chunks
// alone, without the last update (which carries the whole reply), so that a gap shows.
async function collect(stream) {
  const kinds = [];
  let state = 0, reply = "", chunks = "", taskId = "", contextId = "";
  for await (const ev of stream) {
    const p = ev.payload;
    kinds.push(p.$case);
    if (p.$case === "task") {
      state = p.value.status.state; reply = replyOf(p.value); chunks = reply; taskId = p.value.id; contextId = p.value.contextId;
    } else if (p.$case === "statusUpdate") {
      state = p.value.status.state;
    } else if (p.$case === "artifactUpdate") {
      const t = textOf(p.value.artifact.parts);
      reply = p.value.append ? reply + t : t;
      if (!p.value.lastChunk) chunks = p.value.append ? chunks + t : t;
    }
  }
  return { kinds, state, reply, chunks, taskId, contextId };
}

const mode = process.argv[2];
const out = {};
if (mode === "main") {
  const card = await (await fetch(base + "/.well-known/agent-card.json")).json();
  out.card = { name: card.name, url: card.supportedInterfaces?.[0]?.url, streaming: card.capabilities?.streaming, schemes: Object.keys(card.securitySchemes || {}) };
  const c = await client("/");
  const first = await c.sendMessage({ message: msg("My name is Ada.") });
  out.first = { id: first.id, contextId: first.contextId, state: first.status.state, reply: replyOf(first) };
  const second = await c.sendMessage({ message: msg("What is my name?", { contextId: first.contextId }) });
  out.second = { id: second.id, contextId: second.contextId, state: second.status.state, reply: replyOf(second) };
  out.stream = await collect(c.sendMessageStream({ message: msg("Stream this, please.", { contextId: first.contextId }) }));
  const got = await c.getTask({ id: first.id });
  out.got = { id: got.id, state: got.status.state, reply: replyOf(got) };
  try { await c.getTask({ id: "run_nosuchtask" }); out.missing = "no error"; } catch (e) { out.missing = e.name; }

  const w = await client("/a2a/writer/");
  const ask = await w.sendMessage({ message: msg('/tool write_file {"path":"a2a.md","content":"written over A2A\\n"}') });
  out.ask = { id: ask.id, contextId: ask.contextId, state: ask.status.state, prompt: textOf(ask.status.message?.parts) };
  const done = await w.sendMessage({ message: msg("approve", { taskId: ask.id, contextId: ask.contextId }) });
  out.approved = { id: done.id, state: done.status.state, reply: replyOf(done) };
  const ask2 = await w.sendMessage({ message: msg('/tool write_file {"path":"no.md","content":"x"}') });
  const rejected = await collect(w.sendMessageStream({ message: msg("reject", { taskId: ask2.id, contextId: ask2.contextId }) }));
  out.rejected = { askState: ask2.status.state, state: rejected.state, reply: rejected.reply, id: ask2.id };
} else if (mode === "start-slow") {
  const c = await client("/a2a/slow/");
  const t = await c.sendMessage({ message: msg("A long task for the slow agent."), configuration: { returnImmediately: true } });
  out.task = { id: t.id, contextId: t.contextId, state: t.status.state };
} else if (mode === "resubscribe") {
  const c = await client("/a2a/slow/");
  out.resubscribed = await collect(c.resubscribeTask({ id: process.argv[3] }));
} else {
  throw new Error(`unknown mode ${mode}`);
}
process.stdout.write(JSON.stringify(out));
