// Facts learned from a session (POST /v1/sessions/{id}/extract): a button that asks the session's
// agent profile to learn from the turns since the last time, and what it learned, each fact new
// or consolidated into an item of the user's long-term memory.
import { api } from './api.js';
import { h, errorBox, toast } from './dom.js';

// factsPanel is the facts section of the session at base.
export function factsPanel(base) {
  const out = h('div', { id: 'facts-out', 'aria-live': 'polite' });
  const button = h('button', { type: 'button', class: 'secondary', onclick: async () => {
    button.disabled = true;
    try {
      const x = await api('POST', `${base}/extract`);
      toast(`${x.facts.length} facts learned`);
      out.replaceChildren(
        h('p', {}, x.to_seq > x.from_seq
          ? `Read messages #${x.from_seq + 1}–#${x.to_seq} into the namespace ${x.namespace}: ${x.facts.length} facts.`
          : 'No new turns since the last time: nothing to learn.'),
        x.facts.length ? h('ul', { 'aria-label': 'Facts learned' }, ...x.facts.map((f) => h('li', {}, f.text || String(f.value),
          h('span', { class: 'muted' }, f.consolidated_into ? ` · into ${f.consolidated_into}${f.similarity ? ` (similarity ${f.similarity.toFixed(2)})` : ''}` : ' · new'),
          ' ', h('a', { href: '#/memories' }, 'in memory')))) : '');
    } catch (e) { out.replaceChildren(errorBox(e)); }
    button.disabled = false;
  } }, 'Learn facts now');
  return h('section', { 'aria-labelledby': 'facts-title' }, h('h2', { id: 'facts-title' }, 'Facts'),
    h('p', { class: 'muted' }, "What the session's agent learns about you for later sessions (memory_extraction in the agents file; it also learns on its own once the session is idle)."),
    button, out);
}
