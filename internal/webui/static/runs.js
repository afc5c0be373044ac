// Runs and their tool journal.
import { h, json, when, copyable, folded } from './dom.js';

// tickOf reads the schedule and tick a scheduled run's request id names
// (schedule:{schedule_id}:{tick in unix microseconds}, docs/SCHEDULES.md), or null.
function tickOf(r) {
  const m = /^schedule:(sch_[^:]+):(\d+)$/.exec(r.request_id || '');
  return m ? { schedule: m[1], tick: new Date(Number(m[2]) / 1000).toISOString() } : null;
}

// doorNames are the words for the front doors a run records (run.door, docs/API.md).
const doorNames = {
  api: 'the API', openai: 'the OpenAI-compatible API', mcp: 'MCP', 'ag-ui': 'AG-UI', 'ai-sdk': 'the AI SDK chat',
  a2a: 'A2A', schedule: 'a schedule', library: 'an in-process call',
};

// doorOf names the front door that started the run, or '' for a run stored before doors were kept.
function doorOf(r) {
  return r.door ? (doorNames[r.door] || r.door) : '';
}

// startedBy says which front door started the run, and which schedule's tick when one did.
export function startedBy(r) {
  const t = tickOf(r);
  if (t) return h('div', { class: 'started-by' }, 'Started by ', h('a', { href: '#/schedules' }, `schedule ${t.schedule}`), ' at its tick of ', h('time', { datetime: t.tick }, when(t.tick)));
  const d = doorOf(r);
  return d ? h('div', { class: 'started-by', 'data-door': r.door }, `Started through ${d}`) : '';
}

export function runSummary(r) {
  const u = r.usage || {};
  const t = tickOf(r);
  const d = doorOf(r);
  return `Run ${r.id} · ${r.status}${t ? ` · started by schedule ${t.schedule}` : d ? ` · through ${d}` : ''} · agent ${r.agent} (${r.model}) · step ${r.step} · attempt ${r.attempt}${r.takeovers ? ` (taken over ${r.takeovers}× after a crash)` : ''} · usage ${u.input_tokens || 0} in / ${u.output_tokens || 0} out tokens · ${when(r.created_at)}`;
}

const show = (v) => (v === undefined || v === null ? '' : typeof v === 'string' ? v : json(v));

// actionsList is a run's tool journal, one card per call, so that long arguments and results
// read at any width: its tool, effect and status, its ids (copyable), arguments (and the model's
// originals when edited) and result folded when long, and its fingerprints before → after.
export function actionsList(actions) {
  if (!actions.length) return h('p', { class: 'muted' }, 'No tool calls.');
  return h('ol', { class: 'actions', 'aria-label': 'Tool calls' }, ...actions.map((a) => h('li', { class: 'action', 'data-action': a.id },
    h('div', {}, h('strong', {}, `${a.step}.${a.index} ${a.tool}`), a.executor ? ` (${a.executor})` : '', ` · ${a.effect} · `,
      h('span', { class: 'status' }, a.status), a.approval ? ` · ${a.approval}` : '', a.attempt ? ` · attempt ${a.attempt}` : ''),
    h('div', { class: 'muted' }, 'call ', copyable(a.call_id || a.id), a.idempotency_key ? [' · idempotency key ', copyable(a.idempotency_key)] : ''),
    h('div', { class: 'label' }, 'Arguments'), folded(json(a.args)),
    a.original_args ? [h('div', { class: 'label' }, 'the model proposed'), folded(json(a.original_args))] : null,
    h('div', { class: 'label' }, a.error ? 'Error' : 'Result'),
    a.error ? h('div', { class: 'bad wrap' }, show(a.error)) : folded(show(a.result)),
    h('div', { class: 'muted wrap' }, `fingerprint ${a.fingerprint_before || '—'} → ${a.fingerprint_after || '—'}`))));
}
