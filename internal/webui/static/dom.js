// h builds an element: h('button', {type: 'button', onclick: f}, 'text', child…). Text is always
// set as text, never parsed as HTML.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value') el.value = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

let uid = 0;
// field is a labelled input, select or textarea; answers [label, control].
export function field(label, tag, attrs = {}, ...options) {
  const id = attrs.id || `f${++uid}`;
  const control = h(tag, { ...attrs, id }, ...options);
  return [h('label', { for: id }, label, control), control];
}

// json pretty-prints a value.
export const json = (v) => JSON.stringify(v, null, 2);

// when formats a timestamp in the user's locale.
export const when = (t) => (t ? new Date(t).toLocaleString() : '');

// errorBox shows an error with its problem code.
export function errorBox(err) {
  const p = err.problem || {};
  return h('div', { class: 'error', role: 'alert' }, p.code ? `${p.code}: ` : '', err.message);
}

// toast says something briefly in the status region.
export function toast(text) {
  const t = document.getElementById('toast');
  t.textContent = text;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.textContent = ''; }, 6000);
}

// confirmButton is a button that asks again inline before it acts (no browser dialog).
export function confirmButton(label, question, action, cls = 'danger') {
  const wrap = h('span', {});
  const first = h('button', { type: 'button', class: cls === 'danger' ? 'secondary' : cls, onclick: () => {
    first.hidden = true;
    const yes = h('button', { type: 'button', class: cls, onclick: async () => { ask.remove(); first.hidden = false; await action(); } }, `Yes, ${label.toLowerCase()}`);
    const no = h('button', { type: 'button', class: 'secondary', onclick: () => { ask.remove(); first.hidden = false; first.focus(); } }, 'Cancel');
    const ask = h('span', { role: 'group', 'aria-label': question }, ` ${question} `, yes, ' ', no);
    wrap.append(ask);
    yes.focus();
  } }, label);
  wrap.append(first);
  return wrap;
}

// copyable is an id with a Copy button (to the clipboard where the browser allows it; else the
// id is selected, for Ctrl+C).
export function copyable(id) {
  const text = h('span', { class: 'id' }, id);
  return h('span', { class: 'copyable' }, text, ' ', h('button', { type: 'button', class: 'copy', 'aria-label': `Copy ${id}`, onclick: async () => {
    try { await navigator.clipboard.writeText(id); toast(`Copied ${id}`); } catch {
      getSelection().selectAllChildren(text); toast('Selected: press Ctrl+C to copy');
    }
  } }, 'Copy'));
}

const FOLD_LINES = 8;
const FOLD_CHARS = 480;

// folded is a pre of text showing its first lines only when it is long, with Show all (and
// Show less again).
export function folded(text) {
  const lines = text.split('\n');
  const short = lines.length > FOLD_LINES || text.length > FOLD_CHARS ? lines.slice(0, FOLD_LINES).join('\n').slice(0, FOLD_CHARS) : null;
  const pre = h('pre', {}, short === null ? text : `${short} …`);
  if (short === null) return pre;
  const more = h('button', { type: 'button', class: 'secondary fold', 'aria-expanded': 'false', onclick: () => {
    const all = more.getAttribute('aria-expanded') === 'false';
    pre.textContent = all ? text : `${short} …`;
    more.setAttribute('aria-expanded', String(all));
    more.textContent = all ? 'Show less' : `Show all (${lines.length} lines, ${text.length} characters)`;
  } }, `Show all (${lines.length} lines, ${text.length} characters)`);
  return h('div', { class: 'folded' }, pre, more);
}

// stacked marks a table whose rows become cards, each cell under its column's name, when its
// region is narrow (app.css: a container query on .tablewrap), instead of clipping its columns.
export function stacked(table) {
  const names = [...table.querySelectorAll('thead th')].map((th) => th.textContent);
  for (const tr of table.querySelectorAll('tbody tr')) [...tr.children].forEach((td, i) => { if (names[i]) td.dataset.label = names[i]; });
  table.classList.add('stack');
  return table;
}
