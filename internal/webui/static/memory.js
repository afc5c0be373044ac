// A session's working memory: the document, its version history, a diff between two versions and
// an editor that sends a merge patch with expected_version (a conflict is shown, never overwritten).
import { api, q, requestID } from './api.js';
import { h, field, json, when, errorBox, toast, copyable, folded, stacked } from './dom.js';

export function memoryPanel(base, onWrite) {
  const doc = h('pre', { id: 'memory-doc', 'aria-label': 'Working memory document' });
  const head = h('p', { class: 'muted' });
  const history = h('div', {});
  const diffOut = h('div', { id: 'memory-diff' });
  const editMsg = h('div', {});
  const baseNote = h('p', { class: 'muted', id: 'editor-base' });
  const [patchLabel, patch] = field('Merge patch (JSON; null deletes a key)', 'textarea', { rows: 5, name: 'patch', value: '{}' });
  let editorBase = null; // the session version the editor's patch is based on
  let dirty = false; // whether the patch was typed since editorBase was set
  let current = null;
  patch.addEventListener('input', () => { dirty = true; });

  const setBase = (v) => { editorBase = v; dirty = false; baseNote.textContent = `The patch is based on session version ${v}.`; };
  const refresh = async (resetEditor) => {
    try {
      current = await api('GET', `${base}/working_memory`);
    } catch (e) { doc.replaceChildren(errorBox(e)); return; }
    doc.textContent = json(current.working_memory);
    head.textContent = `Memory version ${current.memory_version} · session version ${current.version}`;
    // An untouched editor follows the document; a typed patch keeps the version it was typed on,
    // so that saving it after someone else's write is a conflict, not an overwrite.
    if (resetEditor || editorBase === null || !dirty) setBase(current.version);
    await refreshHistory();
  };
  const refreshHistory = async () => {
    try {
      const items = (await api('GET', `${base}/working_memory/history${q({ limit: 100 })}`)).items;
      if (!items.length) { history.replaceChildren(h('p', { class: 'muted' }, 'No revisions yet: the working memory was never written.')); return; }
      const rows = items.map((r, i) => h('tr', {},
        h('td', {}, h('input', { type: 'radio', name: 'diff-from', value: r.memory_version, 'aria-label': `From memory version ${r.memory_version}`, checked: i === 1 || (items.length === 1 && i === 0) })),
        h('td', {}, h('input', { type: 'radio', name: 'diff-to', value: r.memory_version, 'aria-label': `To memory version ${r.memory_version}`, checked: i === 0 })),
        h('td', {}, r.memory_version), h('td', {}, r.version), h('td', {}, r.run_id ? copyable(r.run_id) : ''), h('td', {}, when(r.created_at)),
        h('td', { class: 'patch' }, folded(json(r.patch)))));
      history.replaceChildren(h('div', { class: 'tablewrap', tabindex: '0', role: 'region', 'aria-label': 'Memory history' }, stacked(h('table', { 'aria-label': 'Memory history' },
        h('thead', {}, h('tr', {}, ...['From', 'To', 'Memory version', 'Session version', 'Run', 'When', 'Patch'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, ...rows)))),
      h('button', { type: 'button', class: 'secondary', onclick: showDiff }, 'Show the diff'));
    } catch (e) { history.replaceChildren(errorBox(e)); }
  };
  const showDiff = async () => {
    const from = history.querySelector('input[name=diff-from]:checked')?.value ?? 0;
    const to = history.querySelector('input[name=diff-to]:checked')?.value;
    if (to === undefined) return;
    try {
      const d = await api('GET', `${base}/working_memory/diff${q({ from, to })}`);
      diffOut.replaceChildren(h('h3', {}, `Changes from memory version ${d.from} to ${d.to}`),
        d.changes.length ? h('div', { class: 'tablewrap', tabindex: '0', role: 'region', 'aria-label': 'Memory diff' }, h('table', { 'aria-label': 'Memory diff' },
          h('thead', {}, h('tr', {}, ...['Path', 'Change', 'Before', 'After'].map((c) => h('th', { scope: 'col' }, c)))),
          h('tbody', {}, ...d.changes.map((c) => h('tr', {}, h('td', {}, c.path), h('td', {}, c.op),
            h('td', {}, 'old' in c ? h('pre', {}, json(c.old)) : ''), h('td', {}, 'new' in c ? h('pre', {}, json(c.new)) : '')))))) : h('p', {}, 'No changes.'));
    } catch (e) { diffOut.replaceChildren(errorBox(e)); }
  };
  const save = h('button', { type: 'submit' }, 'Save the patch');
  const editor = h('form', { 'aria-label': 'Edit the working memory', onsubmit: async (e) => {
    e.preventDefault();
    let p;
    try { p = JSON.parse(patch.value); } catch (err) { editMsg.replaceChildren(errorBox(new Error(`The patch is not JSON: ${err.message}`))); return; }
    try {
      const r = await api('PATCH', `${base}/working_memory`, { patch: p, expected_version: editorBase, request_id: requestID() });
      toast(`Working memory saved (memory version ${r.memory_version})`);
      editMsg.replaceChildren();
      setBase(r.version);
      await refresh();
      onWrite();
    } catch (err) {
      if (err.status === 409 && err.problem?.code === 'version_conflict') {
        let now = null;
        try { now = await api('GET', `${base}/working_memory`); } catch { /* shown without it */ }
        editMsg.replaceChildren(h('div', { class: 'conflict', role: 'alert', id: 'memory-conflict' },
          h('strong', {}, 'Version conflict: nothing was saved. '),
          `Your patch is based on version ${editorBase}; the session is at version ${err.problem.current_version}. The current working memory:`,
          now ? h('pre', {}, json(now.working_memory)) : '',
          h('button', { type: 'button', onclick: async () => {
            save.disabled = true; // until the editor is on the current version
            try { await refresh(true); } finally { save.disabled = false; }
            editMsg.replaceChildren(); patch.focus();
          } }, 'Use the current version and edit again')));
      } else editMsg.replaceChildren(errorBox(err));
    }
  } }, patchLabel, baseNote, save, editMsg);

  const element = h('section', { 'aria-labelledby': 'wm-title' }, h('h2', { id: 'wm-title' }, 'Working memory'), head, doc,
    h('h3', {}, 'Edit'), editor, h('h3', {}, 'History'), history, diffOut);
  return { element, refresh };
}
