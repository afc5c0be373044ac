// The examples of docs/SDK.md, type-checked by the build (never run): a change of the SDK that
// breaks one fails the build.
import { Carryon, CarryonError, isCarryonError } from "@carryon/sdk";

declare function fetchWeather(city: string): Promise<string>;

export async function examples(carryon: Carryon, id: string, sessionId: string): Promise<void> {
  try {
    await carryon.sessions.append(id, [{ role: "user", content: "tab B" }], { ifMatch: 3 });
  } catch (err) {
    if (isCarryonError(err, "version_conflict")) console.log("now at", err.currentVersion);
    else if (err instanceof CarryonError) console.log(err.status, err.code, err.detail);
    else throw err;
  }

  await carryon.update(sessionId, (wm) => {
    wm.notes = [...((wm.notes as string[]) ?? []), "keep the public API"];
    wm.next_action = "split lexer.go";
  });

  const run = await carryon.runs.start(sessionId, { message: "continue the task" });
  for await (const e of carryon.runs.events(run.id)) {
    if (e.type === "model.delta") process.stdout.write((e.data as { text: string }).text);
  }

  const done = await carryon.runs.run(sessionId, {
    message: "What is the weather in Oslo?",
    tools: [{ name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }],
  }, {
    onToolCall: async (call) => fetchWeather((call.arguments as { city: string }).city),
    onApproval: (action) => action.tool === "write_file"
      ? { decision: "approve", arguments: { ...action.args, content: "# Notes\n\nAs the user wrote them.\n" } }
      : { decision: "reject", reason: "not today" },
  });
  console.log(done.status, done.reply);

  await carryon.memories.put("prefs", "editor", { value: "vim", text: "prefers the vim editor with a dark theme" });
  const item = await carryon.memories.get("prefs", "editor");
  await carryon.memories.put("prefs", "editor", { value: "helix" }, { ifMatch: item!.version });
  for await (const hit of carryon.memories.search("which editor", { namespace: "prefs" })) console.log(hit.key, hit.score);
  await carryon.memories.update("stats", "visits", (n) => ({ value: ((n as number) ?? 0) + 1 }));
  await carryon.memories.delete("prefs", "editor");

  const added = await carryon.memories.add("facts", "works from Lisbon on Fridays");
  if (added.consolidated_into) console.log("a near duplicate of", added.consolidated_into, added.similarity, "replaced", added.supersedes?.value);
  for (const v of await carryon.memories.versions("facts", added.key)) console.log(v.version, v.value, v.superseded_at);
  const { items, mode } = await carryon.memories.search("where does she work on Fridays?", { mode: "hybrid", minScore: 0.3, filter: { kind: "preference" } }).page();
  console.log(mode, items.map((m) => [m.key, m.score, m.scores?.keyword, m.scores?.semantic]));

  for await (const m of carryon.sessions.messages(id, { limit: 100 })) console.log(m.seq, m.content);
}
