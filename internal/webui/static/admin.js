// Users and keys, for admins: create a user (its key is shown once), create and revoke keys.
import { api, q, requestID } from './api.js';
import { h, field, when, errorBox, toast, confirmButton } from './dom.js';

export async function adminView(show, me) {
  if (!me.admin) { show('Users and keys', h('p', {}, 'Only an admin can manage users and keys.')); return; }
  const list = h('div', {});
  const secret = h('div', { 'aria-live': 'polite' });
  const msg = h('div', {});
  const showSecret = (label, s) => {
    secret.replaceChildren(h('div', { class: 'card', role: 'alert' }, h('strong', {}, `${label}: `), 'copy it now, it is shown only once.', h('div', { class: 'secret', id: 'new-secret' }, s)));
  };
  const load = async () => {
    try {
      let users = []; let cursor = '';
      do { const p = await api('GET', `/v1/users${q({ limit: 1000, cursor })}`); users = users.concat(p.items); cursor = p.next_cursor || ''; } while (cursor);
      list.replaceChildren(...users.map(userCard));
    } catch (e) { msg.replaceChildren(errorBox(e)); }
  };
  const userCard = (u) => {
    const keys = h('div', {});
    const out = h('div', {});
    const loadKeys = async () => {
      try {
        const items = (await api('GET', `/v1/users/${encodeURIComponent(u.id)}/keys${q({ limit: 1000 })}`)).items;
        keys.replaceChildren(h('ul', {}, ...items.map((k) => h('li', {}, `${k.prefix || k.id} · created ${when(k.created_at)}${k.revoked_at ? ` · revoked ${when(k.revoked_at)}` : ''} `,
          k.revoked_at ? null : confirmButton('Revoke', 'It stops working at once.', async () => {
            try { await api('DELETE', `/v1/keys/${encodeURIComponent(k.id)}`, { request_id: requestID() }); toast('Key revoked'); loadKeys(); } catch (e) { out.replaceChildren(errorBox(e)); }
          })))));
      } catch (e) { keys.replaceChildren(errorBox(e)); }
    };
    loadKeys();
    return h('section', { class: 'card', 'aria-label': `User ${u.name}` }, h('h3', {}, `${u.name}${u.admin ? ' (admin)' : ''}`),
      h('div', { class: 'muted' }, `${u.id} · created ${when(u.created_at)}`), keys,
      h('button', { type: 'button', class: 'secondary', onclick: async () => {
        try { const r = await api('POST', `/v1/users/${encodeURIComponent(u.id)}/keys`, {}); showSecret(`New key for ${u.name}`, r.secret); loadKeys(); } catch (e) { out.replaceChildren(errorBox(e)); }
      } }, 'Create a key'), out);
  };
  const [nameLabel, name] = field('Name', 'input', { type: 'text', required: true });
  const [adminLabel, admin] = field('Admin', 'input', { type: 'checkbox' });
  adminLabel.classList.add('inline');
  const form = h('form', { 'aria-label': 'New user', onsubmit: async (e) => {
    e.preventDefault();
    try { const r = await api('POST', '/v1/users', { name: name.value, admin: admin.checked }); showSecret(`Key of ${r.user.name}`, r.key); name.value = ''; msg.replaceChildren(); load(); } catch (err) { msg.replaceChildren(errorBox(err)); }
  } }, h('div', { class: 'row' }, nameLabel, adminLabel, h('button', { type: 'submit' }, 'Create user')));
  show('Users and keys', h('h2', {}, 'New user'), form, secret, msg, h('h2', {}, 'Users'), list);
  await load();
}
