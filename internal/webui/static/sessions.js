// The caller's sessions: status, agent, title, last activity, goal and next action; filter by
// status and search (both the API's: GET /v1/sessions?status=&q=, the search over titles and
// message text, asked for once typing pauses), paging.
import { api, q, requestID } from './api.js';
import { h, field, when, errorBox } from './dom.js';

// SEARCH_DELAY is how long typing pauses (ms) before the search box asks the server.
const SEARCH_DELAY = 250;

export async function sessionsView(show) {
  const [statusLabel, status] = field('Status', 'select', {}, h('option', { value: '' }, 'any'),
    ...['active', 'closed', 'expired'].map((s) => h('option', { value: s }, s)));
  const [searchLabel, search] = field('Search titles and messages', 'input', { type: 'search', name: 'q' });
  const tbody = h('tbody', {});
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more');
  const count = h('p', { class: 'muted', 'aria-live': 'polite' });
  const msg = h('div', {});
  let loaded = [];
  let cursor = '';

  // needle is the search the loaded rows answer (what the box held when the first page was asked).
  let needle = '';
  // render draws the rows; settled says the loading is over (data-state is what the rows answer,
  // which the tests wait for).
  const render = (settled = true) => {
    tbody.replaceChildren(...loaded.map(rowOf));
    count.textContent = `${loaded.length} ${needle ? 'matching ' : ''}sessions shown${cursor ? ' (more on the server)' : ''}`;
    if (settled) count.dataset.state = `${needle}|${status.value}|${cursor ? 'more' : 'all'}`;
  };
  // Pages load one at a time, in order (a search and Load more may ask at once).
  let chain = Promise.resolve();
  const loadPage = async (reset, limit) => {
    if (reset) { loaded = []; cursor = ''; needle = search.value.trim(); } else if (!cursor) return;
    count.dataset.state = 'loading';
    try {
      const page = await api('GET', `/v1/sessions${q({ status: status.value, q: needle, limit, cursor })}`);
      loaded = loaded.concat(page.items);
      cursor = page.next_cursor || '';
      more.hidden = !cursor;
      msg.replaceChildren();
      render(false);
      await Promise.all(page.items.map(addMemory));
      render();
    } catch (e) { msg.replaceChildren(errorBox(e)); cursor = ''; more.hidden = true; render(); }
  };
  const load = (reset, limit = 25) => (chain = chain.then(() => loadPage(reset, limit)));
  // The search box asks the server once typing pauses, and again only when its words changed.
  let timer = 0;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => { if (search.value.trim() !== needle) load(true); }, SEARCH_DELAY);
  });
  status.addEventListener('change', () => load(true));
  more.addEventListener('click', () => load(false));

  show('Sessions', newSessionForm(), h('h2', {}, 'Your sessions'), h('div', { class: 'row' }, statusLabel, searchLabel), msg,
    h('div', { class: 'tablewrap', tabindex: '0', role: 'region', 'aria-label': 'Your sessions' }, h('table', {},
      h('thead', {}, h('tr', {}, ...['Title', 'Status', 'Agent', 'Last activity', 'Goal', 'Next action', 'Version'].map((c) => h('th', { scope: 'col' }, c)))),
      tbody)), count, more);
  await load(true);
}

// addMemory reads a listed session's goal and next action from its working memory (the listing
// does not carry the document).
async function addMemory(s) {
  try {
    const m = await api('GET', `/v1/sessions/${encodeURIComponent(s.id)}/working_memory`);
    s._goal = m.working_memory?.goal;
    s._next = m.working_memory?.next_action;
  } catch { /* the row shows without them */ }
}

const text = (v) => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));

function rowOf(s) {
  return h('tr', {},
    h('td', {}, h('a', { href: `#/s/${encodeURIComponent(s.id)}` }, s.title || s.id)),
    h('td', { class: 'status' }, s.status), h('td', {}, s.agent), h('td', {}, when(s.last_active_at)),
    h('td', {}, text(s._goal)), h('td', {}, text(s._next)), h('td', {}, s.version));
}

function newSessionForm() {
  const [titleLabel, title] = field('Title', 'input', { type: 'text', name: 'title' });
  const [goalLabel, goal] = field('Goal (working memory)', 'input', { type: 'text', name: 'goal' });
  const [agentLabel, agent] = field('Agent', 'select', { name: 'agent' });
  const msg = h('div', {});
  api('GET', '/v1/agents').then((a) => {
    agent.replaceChildren(...a.items.map((p) => h('option', { value: p.name }, `${p.name} (${p.model})`)));
    agent.value = 'default';
  }).catch(() => agent.append(h('option', { value: '' }, 'default')));
  return h('form', { 'aria-label': 'New session', onsubmit: async (e) => {
    e.preventDefault();
    const body = { request_id: requestID() };
    if (title.value.trim()) body.title = title.value.trim();
    if (goal.value.trim()) body.working_memory = { goal: goal.value.trim() };
    if (agent.value) body.agent = agent.value;
    try {
      const s = await api('POST', '/v1/sessions', body);
      location.hash = `#/s/${encodeURIComponent(s.id)}`;
    } catch (err) { msg.replaceChildren(errorBox(err)); }
  } }, h('h2', {}, 'New session'), h('div', { class: 'row' }, titleLabel, goalLabel, agentLabel, h('button', { type: 'submit' }, 'Create session')), msg);
}
