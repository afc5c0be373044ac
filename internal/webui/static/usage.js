// Usage you can see on a session page: the tokens of each run as a small bar chart (from the
// session's runs list) and the context's token make-up for the next turn as one stacked bar
// (from GET /v1/sessions/{id}/context).
import { h } from './dom.js';

const RUNS = 20; // the newest runs the chart shows

// runsChart is the input and output tokens of the session's newest runs (runs as the runs list
// answers them, newest first), drawn oldest first, each bar as long as its share of the largest.
export function runsChart(runs) {
  const shown = runs.slice(0, RUNS).reverse();
  if (!shown.length) return h('p', { class: 'muted' }, 'No runs yet.');
  const total = (r) => (r.usage?.input_tokens || 0) + (r.usage?.output_tokens || 0);
  const max = Math.max(1, ...shown.map(total));
  const rows = shown.map((r) => {
    const u = r.usage || {};
    const inp = u.input_tokens || 0; const out = u.output_tokens || 0;
    const bar = h('span', { class: 'uc-track' }, seg('uc-in', inp, max), seg('uc-out', out, max));
    return h('li', { 'data-run': r.id, 'aria-label': `Run ${r.id}: ${inp} input and ${out} output tokens` },
      h('a', { class: 'uc-name', href: `#/s/${encodeURIComponent(r.session_id)}/${encodeURIComponent(r.id)}`, title: r.id }, `…${r.id.slice(-6)}`),
      bar, h('span', { class: 'uc-num' }, `${inp} in / ${out} out`));
  });
  const sum = shown.reduce((n, r) => n + total(r), 0);
  return h('figure', { class: 'usage-chart' },
    h('figcaption', {}, `Tokens per run (the newest ${shown.length}; ${sum} in all) `, h('span', { class: 'uc-key uc-in', 'aria-hidden': 'true' }, 'input'), ' ', h('span', { class: 'uc-key uc-out', 'aria-hidden': 'true' }, 'output')),
    h('ol', { class: 'uc-runs', 'aria-label': 'Tokens per run' }, ...rows));
}

function seg(cls, n, max) {
  const s = h('span', { class: `uc-seg ${cls}` });
  s.style.width = `${(100 * n / max).toFixed(3)}%`;
  return s;
}

// partNames are the words for the context's parts (carryon.ContextPart names).
const partNames = {
  system_prompt: 'system', working_memory: 'working memory', long_term_memory: 'long-term memory',
  tool_digest: 'tool digest', summary: 'summary (compaction)', messages: 'messages',
};

// contextBar is the context preview c's parts as one stacked bar (the whole bar is the context,
// each part as long as its share), with a legend that gives each part's tokens, and the share of
// the budget it takes.
export function contextBar(c) {
  const parts = (c.parts || []).filter((p) => p.tokens > 0);
  const whole = Math.max(1, parts.reduce((n, p) => n + p.tokens, 0));
  const bar = h('div', { class: 'cb-bar', role: 'img', 'aria-label': `Context: ${c.tokens} of ${c.budget} tokens; ${parts.map((p) => `${partNames[p.name] || p.name} ${p.tokens}`).join(', ')}` },
    ...parts.map((p) => {
      const s = h('span', { class: `cb-seg part-${p.name}`, 'data-part': p.name, 'data-tokens': p.tokens, title: `${partNames[p.name] || p.name}: ${p.tokens} tokens` });
      s.style.width = `${(100 * p.tokens / whole).toFixed(3)}%`;
      return s;
    }));
  return h('figure', { class: 'context-bar' },
    h('figcaption', {}, `The next turn's context: ${c.tokens} of ${c.budget} tokens (${Math.round(100 * c.tokens / Math.max(1, c.budget))}% of the budget)${c.estimated ? ', estimated' : ''}`),
    bar,
    h('ul', { class: 'cb-legend' }, ...(c.parts || []).map((p) => h('li', { 'data-part': p.name }, h('span', { class: `cb-key part-${p.name}`, 'aria-hidden': 'true' }), `${partNames[p.name] || p.name}: ${p.tokens}`))));
}
