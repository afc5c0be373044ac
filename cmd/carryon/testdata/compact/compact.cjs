// Runs the OpenAI Node SDK's responses.compact round trip against carryon, with only the
// client's baseURL and key changed (CARRYON_URL, CARRYON_KEY): it compacts a stateless input,
// feeds the compacted output back as the input of the next response with a new user message,
// and sends the compaction item altered, which carryon must refuse.
// It prints one JSON line. Run by cmd/carryon's TestResponsesCompactSDK, with NODE_PATH at
// .ci/npm/node_modules.
'use strict';

const OpenAI = require('openai');

async function main() {
  const client = new OpenAI({ baseURL: process.env.CARRYON_URL + '/v1', apiKey: process.env.CARRYON_KEY, maxRetries: 0 });
  const compacted = await client.responses.compact({
    model: 'gpt-test',
    instructions: 'keep the code word',
    input: [
      { role: 'user', content: 'the code word is ZEBRA' },
      { role: 'assistant', content: 'noted' },
      { role: 'user', content: 'remember it' },
    ],
  });
  const next = await client.responses.create({
    model: 'gpt-test',
    input: [...compacted.output, { role: 'user', content: 'what was the code word?' }],
  });
  const item = compacted.output[compacted.output.length - 1];
  let refused = '';
  try {
    await client.responses.create({
      model: 'gpt-test',
      input: [{ ...item, encrypted_content: item.encrypted_content.slice(0, -2) + 'AA' }, { role: 'user', content: 'again' }],
    });
  } catch (err) {
    refused = String(err.status) + ' ' + (err.error && err.error.param);
  }
  console.log(JSON.stringify({
    object: compacted.object,
    id: compacted.id,
    types: compacted.output.map((o) => o.type + (o.role ? ':' + o.role : '')),
    users: compacted.output.filter((o) => o.type === 'message').map((o) => o.content[0].text),
    hasContent: typeof item.encrypted_content === 'string' && item.encrypted_content.length > 20,
    usage: compacted.usage,
    reply: next.output_text,
    refused,
  }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
