// Long-term memory: the user's items by namespace, search, edit (with the item's version), delete.
import { api, q, requestID } from './api.js';
import { h, field, json, when, errorBox, toast, confirmButton } from './dom.js';

const path = (ns, key) => `/v1/memories/${encodeURIComponent(ns)}/${encodeURIComponent(key)}`;

export async function memoriesView(show) {
  const [nsLabel, ns] = field('Namespace (empty: all)', 'input', { type: 'text' });
  const [queryLabel, query] = field('Search', 'input', { type: 'search' });
  const list = h('div', {});
  const msg = h('div', {});
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more');
  let cursor = '';
  let items = [];

  // The listing is grouped by namespace (it is sorted by namespace); search results keep their rank.
  const render = () => {
    if (!items.length) return list.replaceChildren(h('p', { class: 'muted' }, 'No items.'));
    if (items.some((it) => it.score !== undefined)) return list.replaceChildren(...items.map(card));
    const groups = new Map();
    for (const it of items) groups.set(it.namespace, [...(groups.get(it.namespace) || []), it]);
    list.replaceChildren(...[...groups].map(([name, its]) => h('section', { 'aria-label': `Namespace ${name}`, class: 'namespace' },
      h('h2', {}, `Namespace ${name}`, h('span', { class: 'muted' }, ` · ${its.length} item${its.length === 1 ? '' : 's'}`)), ...its.map(card))));
  };
  const load = async (reset) => {
    if (reset) { items = []; cursor = ''; }
    try {
      const page = query.value.trim()
        ? await api('POST', '/v1/memories/search', { query: query.value, ...(ns.value ? { namespace: ns.value } : {}), limit: 25, ...(cursor ? { cursor } : {}) })
        : await api('GET', `/v1/memories${q({ namespace: ns.value, limit: 50, cursor })}`);
      items = items.concat(page.items); cursor = page.next_cursor || ''; more.hidden = !cursor;
      msg.replaceChildren(); render();
      list.dataset.loaded = query.value; // what the shown items answer (the tests wait for it)
    } catch (e) { msg.replaceChildren(errorBox(e)); }
  };
  more.addEventListener('click', () => load(false));

  const card = (it) => {
    const [vLabel, value] = field('Value (JSON)', 'textarea', { rows: 3, value: json(it.value) });
    const [tLabel, text] = field('Text (what search matches)', 'input', { type: 'text', value: it.text || '' });
    const out = h('div', {});
    return h('section', { class: 'card', 'aria-label': `${it.namespace}/${it.key}` },
      h('h3', {}, `${it.namespace}/${it.key}`),
      h('div', { class: 'muted' }, `version ${it.version ?? '?'} · updated ${when(it.updated_at)}${it.score !== undefined ? ` · score ${Number(it.score).toFixed(2)}` : ''}${it.expires_at ? ` · expires ${when(it.expires_at)}` : ''}`),
      vLabel, tLabel,
      h('div', { class: 'row' },
        h('button', { type: 'button', onclick: async () => {
          let v; try { v = JSON.parse(value.value); } catch (e) { out.replaceChildren(errorBox(new Error(`The value is not JSON: ${e.message}`))); return; }
          try {
            const body = { value: v, request_id: requestID() };
            if (text.value) body.text = text.value;
            if (it.version) body.expected_version = it.version;
            Object.assign(it, await api('PUT', path(it.namespace, it.key), body));
            toast('Saved'); render();
          } catch (e) { out.replaceChildren(errorBox(e)); }
        } }, 'Save'),
        confirmButton('Delete', `Forget ${it.namespace}/${it.key}?`, async () => {
          try { await api('DELETE', path(it.namespace, it.key), { request_id: requestID() }); items = items.filter((x) => x !== it); toast('Deleted'); render(); } catch (e) { out.replaceChildren(errorBox(e)); }
        })), out);
  };

  const [newNsLabel, newNs] = field('Namespace', 'input', { type: 'text', required: true });
  const [newKeyLabel, newKey] = field('Key', 'input', { type: 'text', required: true });
  const [newValLabel, newVal] = field('Value (JSON)', 'input', { type: 'text', required: true });
  const [newTextLabel, newText] = field('Text', 'input', { type: 'text' });
  const newMsg = h('div', {});
  const add = h('form', { 'aria-label': 'New item', onsubmit: async (e) => {
    e.preventDefault();
    let v; try { v = JSON.parse(newVal.value); } catch { v = newVal.value; }
    try {
      await api('PUT', path(newNs.value, newKey.value), { value: v, ...(newText.value ? { text: newText.value } : {}), expected_version: 0 });
      toast('Saved'); newMsg.replaceChildren(); load(true);
    } catch (err) { newMsg.replaceChildren(errorBox(err)); }
  } }, h('div', { class: 'row' }, newNsLabel, newKeyLabel, newValLabel, newTextLabel, h('button', { type: 'submit' }, 'Add')), newMsg);

  const filter = h('form', { 'aria-label': 'Filter', onsubmit: (e) => { e.preventDefault(); load(true); } },
    h('div', { class: 'row' }, nsLabel, queryLabel, h('button', { type: 'submit' }, 'Show')));
  show('Long-term memory', filter, msg, list, more, h('h2', {}, 'New item'), add);
  await load(true);
}
