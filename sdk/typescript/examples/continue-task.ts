// The seed's task with the SDK: this morning a process states a task and keeps only the session
// id; this afternoon a new process sends that id and "continue this morning's task", and the
// answer knows the goal and the next action. Run: node continue-task.js, then node continue-task.js <session id>.
import { Carryon } from "@carryon/sdk";

const carryon = new Carryon({ baseUrl: process.env.CARRYON_URL ?? "http://127.0.0.1:8420", apiKey: process.env.CARRYON_KEY ?? "" });
const sessionId = process.argv[2];

const answer = sessionId
  ? await carryon.chat({ session_id: sessionId, message: "continue this morning's task" })
  : await carryon.chat({ message: "Write the release notes: collect the merged changes, then group them by area, then draft the notes" });

const { goal, next_action } = answer.working_memory as { goal?: string; next_action?: string };
console.log(JSON.stringify({ session_id: answer.session_id, status: answer.status, goal, next_action, reply: answer.reply }));
