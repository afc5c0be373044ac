// Runs and their tool journal as text and tables.
import { h, json, when } from './dom.js';

// tickOf reads the schedule and tick a scheduled run's request id names
// (schedule:{schedule_id}:{tick in unix microseconds}, docs/SCHEDULES.md), or null. It is the
// only front door a stored run records: the others leave no mark on it.
function tickOf(r) {
  const m = /^schedule:(sch_[^:]+):(\d+)$/.exec(r.request_id || '');
  return m ? { schedule: m[1], tick: new Date(Number(m[2]) / 1000).toISOString() } : null;
}

// startedBy says which schedule's tick started the run, when one did.
export function startedBy(r) {
  const t = tickOf(r);
  return t ? h('div', { class: 'started-by' }, 'Started by ', h('a', { href: '#/schedules' }, `schedule ${t.schedule}`), ' at its tick of ', h('time', { datetime: t.tick }, when(t.tick))) : '';
}

export function runSummary(r) {
  const u = r.usage || {};
  const t = tickOf(r);
  return `Run ${r.id} · ${r.status}${t ? ` · started by schedule ${t.schedule}` : ''} · agent ${r.agent} (${r.model}) · step ${r.step} · attempt ${r.attempt}${r.takeovers ? ` (taken over ${r.takeovers}× after a crash)` : ''} · usage ${u.input_tokens || 0} in / ${u.output_tokens || 0} out tokens · ${when(r.created_at)}`;
}

export function actionsTable(actions) {
  if (!actions.length) return h('p', { class: 'muted' }, 'No tool calls.');
  return h('div', { class: 'tablewrap', tabindex: '0', role: 'region', 'aria-label': 'Tool calls' }, h('table', { 'aria-label': 'Tool calls' },
    h('thead', {}, h('tr', {}, ...['Step', 'Tool', 'Effect', 'Status', 'Arguments', 'Result', 'Fingerprint before → after'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...actions.map((a) => h('tr', {},
      h('td', {}, `${a.step}.${a.index}`),
      h('td', {}, a.tool, a.executor ? ` (${a.executor})` : ''),
      h('td', {}, a.effect),
      h('td', {}, a.status, a.approval ? ` · ${a.approval}` : ''),
      h('td', {}, h('pre', {}, json(a.args)), a.original_args ? h('div', {}, 'the model proposed', h('pre', {}, json(a.original_args))) : null),
      h('td', {}, a.error ? h('span', { class: 'bad' }, typeof a.error === 'string' ? a.error : json(a.error)) : h('pre', {}, a.result === undefined ? '' : typeof a.result === 'string' ? a.result : json(a.result))),
      h('td', {}, `${a.fingerprint_before || '—'} → ${a.fingerprint_after || '—'}`))))));
}
