// Runs an OpenAI Agents SDK agent against carryon for 30 turns with
// OpenAIResponsesCompactionSession over a MemorySession (the history in the client's session
// store, each model call a response whose input is that history), with only the client's baseURL
// and key changed (CARRYON_URL, CARRYON_KEY). The session's decision hook forces a compaction
// (responses.compact) after turn 20 and only then; from turn 21 on the stored history is the
// compacted output (the user messages and one compaction item) and the turns after it.
//
// It prints one JSON line: the replies, the compaction's usage, and the session's items after
// the last turn (type and role).
// Run by cmd/carryon's TestAgentsSDKCompactionSession, with NODE_PATH at .ci/npm/node_modules.
'use strict';

const OpenAI = require('openai');
const agents = require('@openai/agents');

async function main() {
  const client = new OpenAI({ baseURL: process.env.CARRYON_URL + '/v1', apiKey: process.env.CARRYON_KEY, maxRetries: 0 });
  agents.setTracingDisabled(true);
  agents.setDefaultOpenAIClient(client);
  agents.setOpenAIAPI('responses');
  const agent = new agents.Agent({ name: 'helper', instructions: 'Answer briefly.', model: 'gpt-test' });

  let turn = 0;
  const compactions = [];
  const session = new agents.OpenAIResponsesCompactionSession({
    client,
    underlyingSession: new agents.MemorySession(),
    model: 'gpt-4o',
    shouldTriggerCompaction: () => {
      if (turn === 20) {
        compactions.push(turn);
        return true;
      }
      return false;
    },
  });
  const replies = [];
  for (turn = 1; turn <= 30; turn++) {
    const text = turn === 1 ? 'Turn 1: the code word is ZEBRA.' : `Turn ${turn}.`;
    const result = await agents.run(agent, text, { session });
    replies.push(result.finalOutput);
  }
  const items = (await session.getItems()).map((it) => ({ type: it.type || 'message', role: it.role || '' }));
  process.stdout.write(JSON.stringify({ replies, compactions, items }) + '\n');
}

main().catch((err) => {
  process.stderr.write(String((err && err.stack) || err) + '\n');
  process.exit(1);
});
