// The SDK across a kill -9 of the server (CARRYON_URL, CARRYON_KEY; the Go test kills the server
// and starts it again on the same port and data). It follows a run's event stream and sends a chat
// (a write that waits for its run) at the same time, printing a line for each step so the test
// knows when to kill; at the end one JSON line: the events it got and every attempt of the chat.
import { Carryon } from "@carryon/sdk";

const attempts: { key: string | null; outcome: string }[] = [];
const recording: typeof fetch = async (input, init = {}) => {
  const isChat = String(input).endsWith("/v1/chat");
  try {
    const res = await fetch(input, init);
    if (isChat) attempts.push({ key: new Headers(init.headers).get("Idempotency-Key"), outcome: String(res.status) });
    return res;
  } catch (err) {
    if (isChat) attempts.push({ key: new Headers(init.headers).get("Idempotency-Key"), outcome: "network error" });
    throw err;
  }
};
const say = (line: Record<string, unknown>) => console.log(JSON.stringify(line));
const client = new Carryon({ baseUrl: process.env.CARRYON_URL!, apiKey: process.env.CARRYON_KEY!, fetch: recording, retries: 12, backoffMs: 100, maxBackoffMs: 2000 });

const session = await client.sessions.create({ title: "across a kill" });
const run = await client.runs.start(session.id, { message: "Task: plan a picnic: pick a park, then buy food, then invite friends" });
say({ run: run.id });

const events: { seq: number; type: string }[] = [];
const stream = (async () => {
  for await (const e of client.runs.events(run.id)) {
    events.push({ seq: e.seq, type: e.type });
    say({ event: e.seq, type: e.type });
  }
})();
const chat = client.chat({ message: "Task: write a haiku: count the syllables, then draft it, then read it aloud" }).then((answer) => {
  say({ chat: answer.status });
  return answer;
});
say({ chat: "sent" });
const [, answer] = await Promise.all([stream, chat]);
say({ done: true, events, chat: { session_id: answer.session_id, run_id: answer.run_id, status: answer.status }, attempts });
