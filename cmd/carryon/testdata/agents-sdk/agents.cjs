// Runs an OpenAI Agents SDK agent against carryon, as an existing application would, with only
// the client's baseURL and key changed (CARRYON_URL, CARRYON_KEY):
//
//  1. two turns with OpenAIConversationsSession: the history lives in carryon's Conversations
//     API, and the model calls go to carryon's /v1/responses (a response without a
//     conversation: carryon runs its agent on the input the SDK sends, the whole history);
//  2. a third turn with conversationId on the same conversation: carryon keeps the history and
//     runs the agent on it;
//  3. a turn with conversationId and a function tool the SDK runs: carryon's run stops for the
//     call and continues with the output the SDK sends;
//  4. two turns with the same function tool in session mode (a new OpenAIConversationsSession):
//     after the SDK ran the tool, its next model call sends the history with the function_call
//     and its function_call_output, and carryon's model continues after the output.
//
// It prints one JSON line: the conversation id, the replies, the tool's calls and the sessions'
// items.
// Run by cmd/carryon's TestAgentsSDKOnServe, with NODE_PATH at .ci/npm/node_modules.
'use strict';

const OpenAI = require('openai');
const agents = require('@openai/agents');

async function main() {
  const client = new OpenAI({ baseURL: process.env.CARRYON_URL + '/v1', apiKey: process.env.CARRYON_KEY, maxRetries: 0 });
  agents.setTracingDisabled(true);
  agents.setDefaultOpenAIClient(client);
  agents.setOpenAIAPI('responses');
  const agent = new agents.Agent({ name: 'helper', instructions: 'Answer briefly.', model: 'gpt-test' });

  const session = new agents.OpenAIConversationsSession({ client });
  const first = await agents.run(agent, 'My name is Ada.', { session });
  const second = await agents.run(agent, 'What is my name?', { session });
  const conversation = await session.getSessionId();
  const items = await session.getItems();

  const third = await agents.run(agent, 'Say it once more.', { conversationId: conversation });

  // A function tool the SDK runs: carryon's run stops for it and continues with its output.
  let calls = 0;
  const getWeather = agents.tool({
    name: 'get_weather',
    description: 'The weather in a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    strict: true,
    execute: async (args) => {
      calls++;
      const { city } = typeof args === 'string' ? JSON.parse(args) : args;
      return `sunny in ${city}`;
    },
  });
  const weatherAgent = new agents.Agent({ name: 'weather', instructions: 'Use the tool.', model: 'gpt-test', tools: [getWeather] });
  const weather = await agents.run(weatherAgent, 'What is the weather in Oslo?', { conversationId: conversation });
  const conversationCalls = calls;

  // The same agent in session mode, over two turns: each model call is a response without a
  // conversation whose input is the whole history, and the one after the tool ran ends with
  // the function_call and its function_call_output (carryon continues after the output).
  const toolSession = new agents.OpenAIConversationsSession({ client });
  const sessionWeather = await agents.run(weatherAgent, 'What is the weather in Oslo?', { session: toolSession });
  const sessionCalls = calls - conversationCalls;
  const sessionAfter = await agents.run(weatherAgent, 'Thank you.', { session: toolSession });
  const toolItems = await toolSession.getItems();

  console.log(JSON.stringify({
    conversation,
    first: first.finalOutput,
    second: second.finalOutput,
    third: third.finalOutput,
    weather: weather.finalOutput,
    calls: conversationCalls,
    sessionWeather: sessionWeather.finalOutput,
    sessionCalls,
    sessionAfter: sessionAfter.finalOutput,
    items: items.map((it) => ({ type: it.type, role: it.role })),
    toolItems: toolItems.map((it) => ({ type: it.type, role: it.role, output: typeof it.output === 'string' ? it.output : undefined })),
  }));
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
