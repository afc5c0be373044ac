// Drives carryon's AI SDK door with the `ai` package (pinned in .ci/npm) the way a browser page
// does: the SDK's Chat machinery (AbstractChat with an in-memory state, as @ai-sdk/react keeps
// one) over DefaultChatTransport, and readUIMessageStream on the wire. One phase per run:
//
//   node chat.mjs kill    sends "count to ten"; prints {streaming, messages} once the answer's
//                         text is streaming (the test kills the server then), and {ended, …}
//                         when the cut stream ended.
//   node chat.mjs resume  a reloaded page: a Chat with the messages it kept (MESSAGES) resumes
//                         the stream (GET …/{id}/stream); prints its status and messages.
//   node chat.mjs approve a tool that asks approval: the page approves each request with
//                         addToolApprovalResponse and the chat sends it by itself; prints the
//                         messages before and after.
//   node chat.mjs tool    a client tool: onToolCall answers get_weather with addToolOutput and
//                         the chat sends the output by itself (sendAutomaticallyWhen); then a
//                         message read on the wire with readUIMessageStream; prints both.
//
// CARRYON_URL, CARRYON_KEY and AI_MODULE (the path of ai's dist/index.js) come from the test.
import { pathToFileURL } from "node:url";

const ai = await import(pathToFileURL(process.env.AI_MODULE).href);
const { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithToolCalls, lastAssistantMessageIsCompleteWithApprovalResponses, readUIMessageStream, parseJsonEventStream, uiMessageChunkSchema } = ai;

const url = process.env.CARRYON_URL;
const headers = { Authorization: `Bearer ${process.env.CARRYON_KEY}` };
const chatID = process.env.CHAT_ID;

// MemoryState is a ChatState that keeps the messages in memory and tells listeners of changes.
class MemoryState {
  constructor(messages = []) {
    this.messages = messages;
    this.status = "ready";
    this.error = undefined;
    this.listeners = [];
  }
  pushMessage(m) { this.messages = this.messages.concat(m); this.changed(); }
  popMessage() { this.messages = this.messages.slice(0, -1); this.changed(); }
  replaceMessage(i, m) { this.messages = [...this.messages.slice(0, i), this.snapshot(m), ...this.messages.slice(i + 1)]; this.changed(); }
  snapshot(x) { return structuredClone(x); }
  changed() { for (const l of this.listeners) l(this.messages); }
}

class Chat extends AbstractChat {}

const textOf = (m) => m.parts.filter((p) => p.type === "text").map((p) => p.text).join("");
const transport = (body) => new DefaultChatTransport({ api: `${url}/v1/ai-sdk/chat`, headers, body });
const print = (v) => process.stdout.write(JSON.stringify(v) + "\n");
const until = async (what, cond) => {
  for (let i = 0; i < 3000 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
};

switch (process.argv[2]) {
  case "kill": {
    const state = new MemoryState();
    let announced = false;
    state.listeners.push((msgs) => {
      const last = msgs.at(-1);
      if (!announced && last?.role === "assistant" && textOf(last) !== "") {
        announced = true;
        print({ streaming: true, messages: msgs });
      }
    });
    const chat = new Chat({ id: chatID, transport: transport(), state, onError: () => {} });
    await chat.sendMessage({ text: "count to ten" });
    print({ ended: true, status: chat.status, messages: state.messages });
    break;
  }
  case "resume": {
    const state = new MemoryState(JSON.parse(process.env.MESSAGES));
    const chat = new Chat({ id: chatID, transport: transport(), state });
    await chat.resumeStream();
    print({ status: chat.status, error: chat.error?.message, messages: state.messages });
    // Nothing streams any more: the door answers 204 and the chat stays as it is.
    await chat.resumeStream();
    print({ status: chat.status, error: chat.error?.message, messages: state.messages });
    break;
  }
  case "tool": {
    const state = new MemoryState();
    const tools = { get_weather: { description: "The weather in a city", inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } };
    let calls = 0;
    const chat = new Chat({
      id: chatID, state, transport: transport({ tools }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
      onToolCall: ({ toolCall }) => {
        calls++;
        // Not awaited: the chat sends the output once the stream that made the call is done.
        chat.addToolOutput({ tool: toolCall.toolName, toolCallId: toolCall.toolCallId, output: `sunny in ${toolCall.input.city}` });
      },
    });
    await chat.sendMessage({ text: "what is the weather?" });
    await until("the answer after the tool output", () => chat.status === "ready" && /The weather/.test(textOf(state.messages.at(-1))));
    const first = { status: chat.status, calls, messages: state.messages };
    // The wire: one more user message posted by hand, its stream read by readUIMessageStream.
    const messages = [...state.messages, { id: "wire-1", role: "user", parts: [{ type: "text", text: "Thank you." }] }];
    const res = await fetch(`${url}/v1/ai-sdk/chat`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify({ id: chatID, messages, trigger: "submit-message" }) });
    const chunks = parseJsonEventStream({ stream: res.body, schema: uiMessageChunkSchema }).pipeThrough(new TransformStream({
      transform(chunk, controller) { if (!chunk.success) throw chunk.error; controller.enqueue(chunk.value); },
    }));
    let wire;
    for await (const m of readUIMessageStream({ stream: chunks })) wire = m;
    print({ first, header: res.headers.get("x-vercel-ai-ui-message-stream"), wire });
    break;
  }
  case "approve": {
    const state = new MemoryState();
    const chat = new Chat({ id: chatID, state, transport: transport(), sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: process.env.MESSAGE });
    const asked = state.snapshot(state.messages);
    // carryon asks one approval at a time: approve each until none is asked.
    let approvals = 0;
    for (;;) {
      const part = state.messages.at(-1).parts.find((p) => p.state === "approval-requested");
      if (!part) break;
      approvals++;
      await chat.addToolApprovalResponse({ id: part.approval.id, approved: true });
      const decided = () => state.messages.at(-1).parts.find((p) => p.toolCallId === part.toolCallId);
      await until("the answer after the approval", () => chat.status === "ready" && decided()?.state === "output-available");
    }
    print({ asked, approvals, status: chat.status, error: chat.error?.message, messages: state.messages });
    break;
  }
  default:
    throw new Error(`unknown phase ${process.argv[2]}`);
}
