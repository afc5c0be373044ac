// The inspector's entry point: sign-in, the navigation and the router (#/sessions, #/s/ID,
// #/s/ID/RUN_ID (the session with that run opened), #/schedules, #/webhooks, #/memories, #/usage, #/admin).
import { api, key, setKey, clearKey, ApiError } from './api.js';
import { h, field, errorBox } from './dom.js';
import { sessionsView } from './sessions.js';
import { sessionView } from './session.js';
import { memoriesView } from './memories.js';
import { adminView } from './admin.js';
import { schedulesView } from './schedules.js';
import { webhooksView } from './webhooks.js';
import { usageView } from './spend.js';

const main = document.getElementById('main');
let me = null;
let leave = null; // the current view's cleanup (closes its event streams)

// show replaces the page's content and moves the focus to its heading.
export function show(title, ...content) {
  main.replaceChildren(h('h1', { tabindex: '-1', id: 'title' }, title), ...content);
  document.title = `${title} · carryon inspector`;
  document.getElementById('title').focus();
}

async function signInView() {
  const [keyLabel, keyInput] = field('API key', 'input', { type: 'password', autocomplete: 'off', required: true, name: 'key', spellcheck: 'false' });
  const msg = h('div', {});
  const form = h('form', { onsubmit: async (e) => { e.preventDefault(); await signIn(keyInput.value.trim(), msg); } },
    h('p', {}, 'Sign in with an API key (', h('code', {}, 'carryon users add NAME'), ' prints one; the local user\'s is in the data directory\'s local.key). It is kept in this tab only.'),
    h('div', { class: 'row' }, keyLabel, h('button', { type: 'submit' }, 'Sign in')), msg);
  show('Sign in', form);
  if (['127.0.0.1', 'localhost', '[::1]'].includes(location.hostname)) {
    // Asked only when offered: a refused POST would be a 404 in the console.
    const offer = await fetch('local-key').then((r) => r.json()).catch(() => ({}));
    const res = offer.offered ? await fetch('local-key', { method: 'POST', headers: { 'X-Carryon-Local-Key': '1' } }).catch(() => null) : null;
    if (res && res.ok) {
      const { key: local } = await res.json();
      form.append(h('p', {}, h('button', { type: 'button', class: 'secondary', onclick: () => signIn(local, msg) }, 'Sign in as the local user of this machine')));
    }
  }
}

async function signIn(k, msg) {
  setKey(k);
  try {
    me = await api('GET', '/v1/me');
  } catch (e) {
    clearKey();
    msg.replaceChildren(errorBox(e instanceof ApiError && e.status === 401 ? new Error('That key is not valid.') : e));
    return;
  }
  if (!location.hash || location.hash === '#/signin') location.hash = '#/sessions';
  else route();
}

function signOut() {
  clearKey();
  me = null;
  location.hash = '#/signin';
}

async function route() {
  if (leave) { leave(); leave = null; }
  const nav = document.getElementById('nav');
  if (!key()) { nav.hidden = true; return signInView(); }
  if (!me) {
    try { me = await api('GET', '/v1/me'); } catch { clearKey(); nav.hidden = true; return signInView(); }
  }
  nav.hidden = false;
  document.getElementById('me').textContent = `Signed in as ${me.name}${me.admin ? ' (admin)' : ''}`;
  document.getElementById('nav-admin').hidden = !me.admin;
  const hash = location.hash || '#/sessions';
  for (const a of nav.querySelectorAll('a')) {
    if (hash.startsWith(a.getAttribute('href'))) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  const [, view, arg, run] = hash.split('/');
  try {
    if (view === 's' && arg) leave = await sessionView(decodeURIComponent(arg), show, run && decodeURIComponent(run));
    else if (view === 'schedules') await schedulesView(show);
    else if (view === 'webhooks') await webhooksView(show);
    else if (view === 'memories') await memoriesView(show);
    else if (view === 'usage') await usageView(show, me);
    else if (view === 'admin') await adminView(show, me);
    else await sessionsView(show);
  } catch (e) {
    show('Error', errorBox(e));
  }
}

document.getElementById('signout').addEventListener('click', signOut);
window.addEventListener('hashchange', route);
window.addEventListener('carryon-unauthorized', () => { if (key()) { clearKey(); me = null; route(); } });
route();
