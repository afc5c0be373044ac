// Webhooks (docs/WEBHOOKS.md): the user's subscriptions (URL, events, session scope; never a
// secret) and each one's delivery log, newest first, with redeliver.
import { api, q } from './api.js';
import { h, when, errorBox, toast, stacked } from './dom.js';

const sid = (id) => encodeURIComponent(id);
const PAGE = 20;

export async function webhooksView(show) {
  const list = h('div', { id: 'webhooks' });
  show('Webhooks', h('p', { class: 'muted' }, 'Your webhooks and what was delivered to them. ', h('code', {}, 'carryon webhooks create'), ' subscribes (its secret is shown there, once, never here).'), list);
  try {
    const items = (await api('GET', '/v1/webhooks')).items;
    list.replaceChildren(...(items.length ? items.map(webhookCard) : [h('p', { class: 'muted' }, 'No webhooks.')]));
    list.dataset.loaded = String(items.length);
  } catch (e) { list.replaceChildren(errorBox(e)); }
}

function webhookCard(w) {
  const rows = h('tbody', {});
  const msg = h('div', {});
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more deliveries');
  const log = h('div', { class: 'tablewrap', tabindex: '0', role: 'region', 'aria-label': `Deliveries to ${w.id}` }, h('table', { 'aria-label': `Deliveries to ${w.id}` },
    h('thead', {}, h('tr', {}, ...['Event', 'Status', 'Attempts', 'Response', 'Last error', 'Created', 'Last change', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))), rows));
  const card = h('section', { class: 'card webhook', 'aria-label': `Webhook ${w.id}`, 'data-webhook': w.id },
    h('h2', { class: 'wrap' }, w.url),
    h('div', {}, h('span', { class: 'status' }, w.paused ? 'paused' : 'active'), ' · ',
      w.session_id ? ['session ', h('a', { href: `#/s/${sid(w.session_id)}` }, w.session_id)] : 'every session',
      ` · events ${w.events.join(', ')}`),
    h('div', { class: 'muted' }, h('span', { class: 'id' }, w.id), ` · created ${when(w.created_at)}`),
    h('h3', {}, 'Delivery log'), msg, log, more);
  let cursor = '';

  const load = async (reset) => {
    try {
      const page = await api('GET', `/v1/webhooks/${sid(w.id)}/deliveries${q({ limit: PAGE, cursor: reset ? '' : cursor })}`);
      if (reset) rows.replaceChildren();
      rows.append(...page.items.map(row));
      if (reset && !page.items.length) rows.append(h('tr', {}, h('td', { colspan: 8, class: 'muted' }, 'Nothing delivered yet.')));
      stacked(log.firstChild);
      cursor = page.next_cursor || '';
      more.hidden = !cursor;
      card.dataset.loaded = String(rows.querySelectorAll('tr[data-delivery]').length);
    } catch (e) { msg.replaceChildren(errorBox(e)); }
  };
  more.addEventListener('click', () => load(false));

  const row = (d) => {
    const tr = h('tr', { 'data-delivery': d.id },
      h('td', {}, h('div', {}, d.event_type), h('div', { class: 'muted id' }, d.event_id), d.session_id ? h('div', { class: 'muted' }, 'session ', h('a', { href: `#/s/${sid(d.session_id)}` }, d.session_id)) : null),
      h('td', { class: `status delivery-${d.status}` }, d.status),
      h('td', {}, d.attempts),
      h('td', {}, d.response_code || '—'),
      h('td', { class: 'wrap' }, d.last_error ? h('span', { class: 'bad' }, d.last_error) : '—'),
      h('td', {}, when(d.created_at)),
      h('td', {}, d.delivered_at ? `delivered ${when(d.delivered_at)}` : d.next_attempt_at && d.status === 'pending' ? `next attempt ${when(d.next_attempt_at)}` : `updated ${when(d.updated_at)}`),
      h('td', {}, h('button', { type: 'button', class: 'secondary', 'aria-label': `Redeliver ${d.id}`, onclick: async () => {
        try {
          const again = await api('POST', `/v1/webhooks/${sid(w.id)}/deliveries/${sid(d.id)}/redeliver`);
          toast(`Delivery ${d.id} queued again`); msg.replaceChildren();
          tr.replaceWith(row(again)); stacked(log.firstChild);
        } catch (e) { msg.replaceChildren(errorBox(e)); }
      } }, 'Redeliver')));
    return tr;
  };
  load(true);
  return card;
}
