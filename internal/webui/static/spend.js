// Spend you can see: tokens (and USD where prices are configured) per UTC day as a small
// hand-drawn SVG bar chart, budgets beside what was spent against them, and a run stopped at a
// budget (GET /v1/me/usage, GET /v1/sessions/{id}/usage, a run's budget_stop).
import { api } from './api.js';
import { h, field, errorBox } from './dom.js';

const NS = 'http://www.w3.org/2000/svg';
function s(tag, attrs, ...kids) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...kids);
  return el;
}

const usd = (n) => `$${n < 0.01 && n > 0 ? n.toPrecision(2) : n.toFixed(2)}`;
const num = (n) => n.toLocaleString('en');

// daysChart draws days ({date, tokens, usd, calls}, oldest first) as bars of tokens and, when any
// day cost something, a line of USD on its own scale; each bar has its day's figures as a title.
export function daysChart(days, what) {
  const W = 600; const H = 120; const bw = W / Math.max(1, days.length);
  const maxT = Math.max(1, ...days.map((d) => d.tokens));
  const maxU = Math.max(0, ...days.map((d) => d.usd));
  const tokens = days.reduce((n, d) => n + d.tokens, 0);
  const money = days.reduce((n, d) => n + d.usd, 0);
  const priced = maxU > 0;
  const y = (v, max) => (H - 2 - (H - 4) * v / max).toFixed(1);
  const bars = days.map((d, i) => s('rect', { x: (i * bw + bw * 0.1).toFixed(1), width: (bw * 0.8).toFixed(1), y: y(d.tokens, maxT), height: ((H - 4) * d.tokens / maxT).toFixed(1), class: 'dc-bar', 'data-date': d.date, 'data-tokens': d.tokens },
    s('title', {}, `${d.date}: ${num(d.tokens)} tokens (${num(d.input_tokens)} in, ${num(d.output_tokens)} out), ${d.calls} calls${priced ? `, ${usd(d.usd)}` : ''}`)));
  const line = priced ? [s('polyline', { class: 'dc-usd', fill: 'none', points: days.map((d, i) => `${(i * bw + bw / 2).toFixed(1)},${y(d.usd, maxU)}`).join(' ') })] : [];
  const first = days[0]?.date || ''; const last = days[days.length - 1]?.date || '';
  const label = `${what}: ${num(tokens)} tokens${priced ? `, ${usd(money)}` : ''} in ${days.length} days from ${first} to ${last}; most in a day ${num(maxT === 1 && !tokens ? 0 : maxT)} tokens${priced ? `, ${usd(maxU)}` : ''}`;
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', class: 'dc-svg', role: 'img', 'aria-label': label },
    s('line', { x1: 0, x2: W, y1: H - 1, y2: H - 1, class: 'dc-axis' }), ...bars, ...line);
  return h('figure', { class: 'days-chart' },
    h('figcaption', {}, `${what} per day (UTC): ${num(tokens)} tokens${priced ? `, ${usd(money)}` : ''} in the last ${days.length} days `,
      h('span', { class: 'dc-key dc-tok', 'aria-hidden': 'true' }, 'tokens'), priced ? [' ', h('span', { class: 'dc-key dc-money', 'aria-hidden': 'true' }, 'USD')] : ''),
    svg, h('div', { class: 'dc-ends muted', 'aria-hidden': 'true' }, h('span', {}, first), h('span', {}, last)));
}

// limitText is a budget's limits and what happens at them ("none" without one).
export function limitText(b) {
  if (!b || (b.tokens == null && b.usd == null)) return 'none';
  const parts = [];
  if (b.tokens != null) parts.push(`${num(b.tokens)} tokens`);
  if (b.usd != null) parts.push(usd(b.usd));
  return `${parts.join(' or ')}, then ${b.on_exceed || 'pause'}`;
}

// spentText is spend ({tokens, usd}) and, under a budget, the share of each limit.
export function spentText(sp, b) {
  const share = [];
  if (b?.tokens != null) share.push(`${Math.round(100 * sp.tokens / Math.max(1, b.tokens))}% of the tokens`);
  if (b?.usd != null) share.push(`${Math.round(100 * sp.usd / (b.usd || 1e-9))}% of the USD`);
  return `${num(sp.tokens)} tokens, ${usd(sp.usd)}${share.length ? ` (${share.join(', ')})` : ''}`;
}

// budgetStop says why a run stopped at a budget: which one, what was spent and the limit.
export function budgetStop(st) {
  const which = { session: "the session's budget", user_day: `the user's budget for ${st.period}`, user_month: `the user's budget for the month ${st.period}` }[st.scope] || st.scope;
  return h('div', { class: 'bad budget-stop' }, `Stopped at ${which}: spent ${num(st.spent.tokens)} tokens, ${usd(st.spent.usd)} of ${limitText(st.limit)}.`);
}

// sessionSpend is a session page's spend panel: spent and budget, and the chart of its days.
export function sessionSpend(base) {
  // Until the first answer the box holds lines of the answer's height, so that what is below it
  // does not move under a reader's pointer when the chart arrives.
  const box = h('div', { id: 'session-spend', 'aria-busy': 'true' }, h('p', {}, 'Spent: …'),
    h('figure', { class: 'days-chart' }, h('figcaption', {}, 'This session per day (UTC): …'), h('div', { class: 'dc-svg' }), h('div', { class: 'dc-ends' }, ' ')));
  const refresh = async () => {
    try {
      const u = await api('GET', `${base}/usage?days=30`);
      box.replaceChildren(
        h('p', {}, 'Spent: ', h('span', { id: 'session-spent' }, spentText(u.spend, u.budget)), ' · budget: ', h('span', { id: 'session-budget' }, limitText(u.budget))),
        daysChart(u.days, 'This session'));
    } catch (e) { box.replaceChildren(errorBox(e)); }
    box.removeAttribute('aria-busy');
  };
  return { el: box, refresh };
}

// usagePanel is a user's usage u: today's and this month's spend against the budgets, the chart
// of the days, and this month's spend per model; who names the user in the labels; id prefixes
// the rows' ids.
function usagePanel(u, who, id) {
  const period = (name, p, b, rid) => h('tr', { id: rid },
    h('th', { scope: 'row' }, `${name} (${p.period})`), h('td', {}, spentText(p, b)), h('td', {}, limitText(b)));
  const models = u.month.models.map((m) => m.model).sort();
  return [
    h('div', { class: 'tablewrap' }, h('table', { 'aria-label': `${who}: spend and budgets` },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Period'), h('th', { scope: 'col' }, 'Spent'), h('th', { scope: 'col' }, 'Budget'))),
      h('tbody', {}, period('Today', u.today, u.budget.day, `${id}-today`), period('This month', u.month, u.budget.month, `${id}-month`)))),
    daysChart(u.days, who),
    models.length ? h('div', { class: 'tablewrap' }, h('table', { 'aria-label': `${who}: spend per model this month` },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Model'), h('th', { scope: 'col' }, 'Calls'), h('th', { scope: 'col' }, 'Tokens in / out'), h('th', { scope: 'col' }, 'USD'))),
      h('tbody', {}, ...u.month.models.map((m) => h('tr', {}, h('td', {}, m.model), h('td', {}, m.calls), h('td', {}, `${num(m.input_tokens)} / ${num(m.output_tokens)}`), h('td', {}, usd(m.usd)))))))
      : h('p', { class: 'muted' }, 'No model calls this month.'),
  ];
}

// usageView is the caller's usage page (#/usage): today's and this month's spend against the
// budgets, per model, and the chart of the last 30 days; an admin can show another user's.
export async function usageView(show, me) {
  const u = await api('GET', '/v1/me/usage?days=30');
  let other = '';
  if (me && me.admin) {
    const out = h('div', { id: 'other-usage' });
    const [label, input] = field('User (id or name)', 'input', { type: 'text', name: 'user', autocomplete: 'off', spellcheck: 'false' });
    other = h('section', { 'aria-labelledby': 'other-title' }, h('h2', { id: 'other-title' }, "Another user's usage"),
      h('form', { class: 'row', onsubmit: async (e) => {
        e.preventDefault();
        const name = input.value.trim();
        if (!name) return;
        try {
          const o = await api('GET', `/v1/users/${encodeURIComponent(name)}/usage?days=30`);
          out.replaceChildren(h('h3', {}, `Usage of ${name}`), ...usagePanel(o, `${name}'s runs`, 'other'));
        } catch (err) { out.replaceChildren(errorBox(err)); }
      } }, label, h('button', { type: 'submit' }, 'Show')), out);
  }
  show('Usage', ...usagePanel(u, 'Your runs', 'usage'),
    h('p', { class: 'muted' }, 'Days are UTC. USD is 0 unless the agents file prices the models; an admin sets the budgets.'), other);
}
