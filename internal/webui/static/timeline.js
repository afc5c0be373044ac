// A session's timeline: its messages in order (deleted ones as tombstones, summaries with the
// messages they cover under a compaction marker, tool calls with their arguments), each with a confirmed Delete, and each
// run after the message that triggered it (status, attempt, usage; opened: its waterfall and tool journal).
import { api, q, requestID } from './api.js';
import { h, json, when, errorBox, toast, confirmButton, copyable, folded } from './dom.js';
import { actionsList, runSummary, startedBy } from './runs.js';
import { storedEvents, waterfall } from './waterfall.js';
import { budgetStop } from './spend.js';

const sid = (id) => encodeURIComponent(id);

// timelinePanel is the timeline of the session at base; onChange is called after a delete. The
// run openRun (a link's) starts opened.
export function timelinePanel(base, onChange, openRun) {
  const element = h('div', { id: 'timeline' });
  const open = new Set(openRun ? [openRun] : []); // the ids of the runs the user opened

  // refresh reads the messages (tombstones included) and runs again; it answers the runs.
  const refresh = async () => {
    try {
      let msgs = []; let cursor = '';
      do {
        const page = await api('GET', `${base}/messages${q({ limit: 1000, cursor, include_deleted: 'true' })}`);
        msgs = msgs.concat(page.items); cursor = page.next_cursor || '';
      } while (cursor && msgs.length < 5000);
      const runs = (await api('GET', `${base}/runs${q({ limit: 100 })}`)).items;
      const byTrigger = new Map();
      for (const r of runs.slice().reverse()) {
        const list = byTrigger.get(r.trigger_seq) || [];
        list.push(r); byTrigger.set(r.trigger_seq, list);
      }
      const items = [];
      for (const m of msgs) {
        items.push(m.deleted ? tombstoneItem(m) : messageItem(m));
        for (const r of byTrigger.get(m.seq) || []) items.push(runItem(r, open));
        byTrigger.delete(m.seq);
      }
      for (const list of byTrigger.values()) for (const r of list) items.push(runItem(r, open));
      element.replaceChildren(...(items.length ? items : [h('p', { class: 'muted' }, 'No messages yet.')]));
      return runs;
    } catch (e) { element.replaceChildren(errorBox(e)); return []; }
  };

  const messageItem = (m) => {
    const msg = h('div', {});
    const del = confirmButton('Delete message', `Delete message #${m.seq}? It is hidden from every read and from the model's context; forks made before keep it.`, async () => {
      try {
        await api('DELETE', `${base}/messages/${m.seq}`, { request_id: requestID() });
        toast(`Message #${m.seq} deleted`);
        await refresh();
        onChange();
      } catch (e) { msg.replaceChildren(errorBox(e)); }
    });
    del.querySelector('button').setAttribute('aria-label', `Delete message #${m.seq}`); // one of many: say which
    const summary = m.kind === 'summary';
    return h('article', { class: `msg ${m.role}${summary ? ' summary' : ''}`, 'aria-label': `Message ${m.seq} (${summary ? 'summary' : m.role})` },
      summary ? compactionMarker(m) : '',
      h('div', { class: 'meta' }, `#${m.seq} ${m.role}${m.name ? ` (${m.name})` : ''}${summary ? ` · summary of messages #${m.covers_from}–#${m.covers_to}` : ''} · v${m.version} · ${m.tokens} tokens · ${when(m.created_at)}${m.tool_call_id ? ` · answers ${m.tool_call_id}` : ''}`),
      h('div', { class: 'content' }, m.content),
      ...(m.tool_calls || []).map((c) => h('div', {}, h('span', { class: 'muted' }, `calls ${c.name} (${c.id}) with`), folded(json(c.arguments)))),
      h('div', { class: 'row' }, del), msg);
  };
  return { element, refresh };
}

// compactionMarker heads a summary message: the line where the history before it was compacted,
// what the compaction covers and, for one made by POST /compact or a run's threshold, the tokens
// of the context before and after it, the model that wrote it and what it was asked to keep.
function compactionMarker(m) {
  const c = (m.metadata && m.metadata.compaction) || null;
  const label = `Compaction of messages #${m.covers_from}–#${m.covers_to}`;
  const facts = [`${label} (${m.covers_to - m.covers_from + 1} messages)`];
  if (c) {
    const saved = c.tokens_before > 0 ? Math.round(100 * (1 - c.tokens_after / c.tokens_before)) : 0;
    facts.push(`context ${c.tokens_before} → ${c.tokens_after} tokens (${saved}% less)`);
    if (c.model) facts.push(`by ${c.model}`);
  } else {
    facts.push('no compaction record: a summary a run or a client stored');
  }
  return h('div', { class: 'compaction', role: 'note', 'aria-label': label },
    h('div', {}, facts.join(' · ')),
    c && c.instructions ? h('div', { class: 'muted' }, 'Asked to keep: ', c.instructions) : '');
}

// tombstoneItem is a deleted message: what it was (role, kind) and when it was deleted, no content.
function tombstoneItem(m) {
  return h('article', { class: `msg ${m.role} deleted`, 'aria-label': `Message ${m.seq} (deleted)` },
    h('div', { class: 'meta' }, `#${m.seq} ${m.role}${m.kind === 'summary' ? ' summary' : ''} · deleted at version ${m.version} · ${when(m.created_at)}`),
    h('div', { class: 'muted' }, '(deleted: its content is hidden from every read and from the model)'));
}

// runItem is a run; opened, its waterfall (waterfall.js) and its tool journal. The runs in open keep open when the timeline is
// drawn again (it is, whenever a run moves on).
function runItem(r, open) {
  const body = h('div', {});
  const d = h('details', { class: 'card run', id: `run-${r.id}`, open: open.has(r.id) }, h('summary', {}, runSummary(r)), body);
  let loaded = false;
  const load = async () => {
    if (loaded) return;
    loaded = true;
    body.append(h('div', { class: 'muted' }, 'run ', copyable(r.id), r.trace_id ? [' · trace ', copyable(r.trace_id)] : ''), startedBy(r), r.reply ? h('div', {}, 'Reply: ', r.reply) : '', r.error ? h('div', { class: 'bad' }, 'Error: ', typeof r.error === 'string' ? r.error : json(r.error)) : '', r.budget_stop ? budgetStop(r.budget_stop) : '');
    try {
      const [actions, events] = await Promise.all([api('GET', `/v1/runs/${sid(r.id)}/actions${q({ limit: 1000 })}`), storedEvents(r.id)]);
      body.append(waterfall(r, events, actions.items), h('h4', {}, 'Tool journal'), actionsList(actions.items));
    } catch (e) { body.append(errorBox(e)); }
  };
  d.addEventListener('toggle', () => {
    if (d.open) { open.add(r.id); load(); } else open.delete(r.id);
  });
  if (d.open) load();
  return d;
}
