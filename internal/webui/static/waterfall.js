// A run as a picture: a waterfall of its attempts drawn only from what is stored (the run's
// events, GET /v1/runs/{id}/events?follow=false, and its tool journal), so it is the same after a
// restart and on any instance. Each model call, tool call and wait is a bar on one time axis; a
// bar is a button, and choosing it shows its details under the chart.
import { key, ApiError } from './api.js';
import { h, json, when, copyable, folded } from './dom.js';

// storedEvents reads the events a run has stored so far (the SSE text of follow=false, parsed).
export async function storedEvents(runID) {
  let res;
  try {
    res = await fetch(`/v1/runs/${encodeURIComponent(runID)}/events?follow=false`, { headers: { Authorization: `Bearer ${key()}`, Accept: 'text/event-stream' } });
  } catch (e) {
    throw new ApiError(0, { detail: `the server did not answer (${e.message})` });
  }
  const text = await res.text();
  if (!res.ok) {
    let p = {};
    try { p = JSON.parse(text); } catch { p = { detail: text }; }
    throw new ApiError(res.status, p);
  }
  return parseEvents(text);
}

// parseEvents reads SSE text: each block's data lines are one event's JSON; comments and blocks
// without data are skipped.
export function parseEvents(text) {
  const out = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let data = '';
    for (const line of block.split(/\r?\n/)) if (line.startsWith('data:')) data += line.slice(5).trimStart();
    if (!data) continue;
    try { out.push(JSON.parse(data)); } catch { /* not an event */ }
  }
  return out.filter((e) => e.seq).sort((a, b) => a.seq - b.seq);
}

const ms = (t) => new Date(t).getTime();

// duration says a length of time briefly: 65 ms, 1.2 s, 3 min 4 s.
export function duration(d) {
  if (d < 1000) return `${Math.max(0, Math.round(d))} ms`;
  if (d < 60000) return `${(d / 1000).toFixed(1)} s`;
  const m = Math.floor(d / 60000);
  return `${m} min ${Math.round((d % 60000) / 1000)} s`;
}

const FINAL = ['run.finished', 'run.failed'];

// build turns a run's events and journal into attempts, each with its bars in time order:
// {attempt, kind ('first', 'resumed', 'takeover'), why, at, bars: [{kind, name, label, start,
// end, open, events, action, ...}]}. It answers {attempts, start, end}.
export function build(events, actions, now = Date.now()) {
  const byID = new Map(actions.map((a) => [a.id, a]));
  const attempts = [];
  let cur = null;
  let phase = null; // the event that ended the previous phase: a model call starts there
  let phaseEvents = [];
  const tools = new Map(); // action id → its open bar
  let wait = null;
  let calls = 0;
  let prev = null;
  const attemptOf = () => {
    if (!cur) { cur = { attempt: 1, kind: 'first', why: 'started', at: events.length ? ms(events[0].created_at) : now, bars: [] }; attempts.push(cur); }
    return cur;
  };
  const closeOpen = (at) => {
    for (const b of tools.values()) { b.end = at; b.open = true; b.status = b.status || 'cut off'; }
    tools.clear();
  };
  for (const ev of events) {
    const t = ms(ev.created_at);
    const d = ev.data || {};
    switch (ev.type) {
      case 'run.started': {
        closeOpen(t);
        const n = d.attempt || (cur ? cur.attempt + 1 : 1);
        let kind = 'first'; let why = 'started';
        if (n > 1) {
          if (prev && prev.type === 'run.approved') { kind = 'resumed'; why = 'resumed after the decision'; }
          else if (prev && prev.type === 'run.tool_outputs') { kind = 'resumed'; why = 'resumed with the client tool outputs'; }
          else { kind = 'takeover'; why = 'taken over after a crash'; }
        }
        cur = { attempt: n, kind, why, at: t, bars: [], runner: d.runner };
        attempts.push(cur);
        phase = ev; phaseEvents = [ev];
        break;
      }
      case 'model.delta':
        phaseEvents.push(ev);
        break;
      case 'message.appended': {
        const msgs = d.messages || [];
        const assistant = msgs.find((m) => m.role === 'assistant');
        if (assistant && phase) {
          calls++;
          const calls2 = assistant.tool_calls || [];
          const first = phaseEvents.find((e) => e.type === 'model.delta' && e.data && e.data.at && e.data.text);
          attemptOf().bars.push({
            kind: 'model', name: `model call ${calls}`, start: ms(phase.created_at), end: t,
            tokens: assistant.tokens || 0, input: d.usage ? d.usage.input_tokens : null, toolCalls: calls2.map((c) => c.name), message: assistant,
            firstToken: first ? ms(first.data.at) : null,
            events: [...phaseEvents, ev],
          });
          phase = null; phaseEvents = [];
        }
        if (msgs.some((m) => m.role === 'tool')) { phase = ev; phaseEvents = [ev]; }
        break;
      }
      case 'tool.started': {
        const b = { kind: 'tool', name: d.tool, effect: d.effect, start: t, end: t, events: [ev], action: byID.get(d.id) || d, call: d, step: d.step };
        tools.set(d.id, b);
        attemptOf().bars.push(b);
        break;
      }
      case 'tool.finished': {
        const b = tools.get(d.id);
        if (b) { b.end = t; b.status = d.status; b.events.push(ev); b.call = d; tools.delete(d.id); }
        break;
      }
      case 'run.waiting_approval': case 'run.requires_action': {
        closeOpen(t);
        const approval = ev.type === 'run.waiting_approval';
        const a = d.action || {};
        const names = approval ? [a.tool] : ((d.required_action && d.required_action.tool_calls) || []).map((c) => c.name);
        // A call whose tool asks for approval waits with status waiting; one a crash cut off
        // (started, unknown) waits for the user's decision on what became of it.
        const cut = approval && a.status && a.status !== 'waiting';
        const name = !approval ? `waiting for client tool outputs (${names.join(', ') || 'none'})` : cut ? `waiting for a decision on ${a.tool} (cut off by a crash)` : `waiting for approval of ${a.tool || 'a call'}`;
        wait = { kind: 'wait', name,
          start: t, end: t, open: true, events: [ev], action: approval ? byID.get(a.id) || a : null, approval };
        attemptOf().bars.push(wait);
        break;
      }
      case 'run.approved': case 'run.tool_outputs':
        if (wait) { wait.end = t; wait.open = false; wait.events.push(ev); wait.decision = d.decision; wait = null; }
        phase = ev; phaseEvents = [ev];
        break;
      default:
        if (FINAL.includes(ev.type)) closeOpen(t);
        break;
    }
    prev = ev;
  }
  const last = events.length ? events[events.length - 1] : null;
  const ended = last && FINAL.includes(last.type);
  const end = ended ? ms(last.created_at) : Math.max(now, last ? ms(last.created_at) : now);
  if (wait) wait.end = end;
  for (const b of tools.values()) { b.end = end; b.open = true; b.status = 'running'; }
  const start = attempts.length ? attempts[0].at : end;
  for (const at of attempts) for (const b of at.bars) { b.facts = factsOf(b); b.label = `${b.facts.join(', ')}, ${duration(b.end - b.start)}`; }
  return { attempts, start, end, ended };
}

// decisions are the words for the decisions a run.approved event records.
const decisions = { approve: 'approved', reject: 'rejected', rerun: 'run again', mark_done: 'marked done', skip: 'skipped' };

// factsOf is what a bar's row says before its length; with the length, its accessible name:
// "write_file, reconcilable, succeeded, 65 ms" (the row shows the same words, so that what is
// seen and what is read out agree).
function factsOf(b) {
  if (b.kind === 'model') return [b.name, ...(b.input == null ? [] : [`${b.input} input tokens`]), `${b.tokens} output tokens`];
  if (b.kind === 'tool') return [b.name, b.effect, b.status || 'running'];
  return [b.name, b.open ? 'still waiting' : decisions[b.decision] || b.decision || 'answered'];
}

// waterfall is the picture of run r (as GET /v1/runs/{id} or a runs list answers it) from its
// stored events and journal.
export function waterfall(r, events, actions) {
  const { attempts, start, end } = build(events, actions);
  const span = Math.max(1, end - start);
  const detail = h('div', { class: 'wf-detail', 'aria-live': 'polite' });
  const pct = (t) => `${(100 * (t - start) / span).toFixed(3)}%`;
  let chosen = null;
  const u = r.usage || {};
  const bars = attempts.map((a) => {
    const rows = a.bars.map((b) => {
      const bar = h('span', { class: `wf-bar ${b.kind}${b.effect ? ` effect-${b.effect}` : ''}${b.status && b.status !== 'succeeded' ? ' not-ok' : ''}${b.open ? ' open' : ''}` });
      bar.style.left = `min(${pct(b.start)}, calc(100% - 3px))`; // a bar at the end still shows, inside its track
      bar.style.width = `max(3px, ${(100 * (b.end - b.start) / span).toFixed(3)}%)`;
      if (b.firstToken) {
        const mark = h('span', { class: 'wf-ttft' });
        mark.style.left = `min(${(100 * (b.firstToken - b.start) / Math.max(1, b.end - b.start)).toFixed(3)}%, calc(100% - 2px))`;
        bar.append(mark);
      }
      const btn = h('button', { type: 'button', class: `wf-row ${b.kind}`, 'aria-label': b.label, 'aria-pressed': 'false', 'data-action': b.action?.id, onclick: () => {
        if (chosen) chosen.setAttribute('aria-pressed', 'false');
        chosen = btn; btn.setAttribute('aria-pressed', 'true');
        detail.replaceChildren(barDetail(b, start));
      } }, h('span', { class: 'wf-name' }, b.facts.join(' · ')), h('span', { class: 'wf-track' }, bar), h('span', { class: 'wf-time' }, ` ${duration(b.end - b.start)}`));
      return h('li', {}, btn);
    });
    return h('div', { class: `wf-attempt ${a.kind}`, 'data-attempt': a.attempt },
      h('div', { class: 'wf-attempt-head' }, `Attempt ${a.attempt} · ${a.why} at +${duration(a.at - start)}${a.runner ? ` on ${a.runner}` : ''}`),
      rows.length ? h('ol', { class: 'wf-bars', 'aria-label': `Attempt ${a.attempt}` }, ...rows) : h('p', { class: 'muted' }, 'Nothing stored in this attempt yet.'));
  });
  const takeovers = attempts.filter((a) => a.kind === 'takeover').length;
  return h('section', { class: 'waterfall', 'aria-label': `Waterfall of run ${r.id}` },
    h('div', { class: 'wf-head' }, h('strong', {}, 'Waterfall'),
      ` · ${attempts.length} attempt${attempts.length === 1 ? '' : 's'}${takeovers ? ` (${takeovers} takeover${takeovers === 1 ? '' : 's'})` : ''} · ${duration(end - start)} · `,
      h('span', { class: 'wf-usage' }, `usage ${u.input_tokens || 0} in / ${u.output_tokens || 0} out tokens`),
      r.trace_id ? [' · trace ', copyable(r.trace_id)] : ''),
    h('div', { class: 'wf-legend', 'aria-hidden': 'true' }, ...['model call', 'read', 'idempotent', 'reconcilable', 'unsafe', 'wait'].map((k) => h('span', { class: `wf-key ${k === 'model call' ? 'model' : k === 'wait' ? 'wait' : `tool effect-${k}`}` }, k)),
      h('span', { class: 'wf-key ttft' }, 'first token')),
    attempts.length ? [axis(end - start), ...bars] : h('p', { class: 'muted' }, 'The run has not started yet.'),
    detail);
}

// axis is the time scale over the rows: the run's start, its middle and its end.
function axis(span) {
  return h('div', { class: 'wf-axis', 'aria-hidden': 'true' }, h('span', {}),
    h('span', { class: 'wf-ticks' }, h('span', { class: 'tick start' }, '0'), h('span', { class: 'tick mid' }, `+${duration(span / 2)}`), h('span', { class: 'tick end' }, `+${duration(span)}`)), h('span', {}));
}

// barDetail is what a chosen bar stands for: its times and status, the call's arguments and
// result (from the journal), and the events it spans.
function barDetail(b, start) {
  const a = b.action;
  const facts = [`from +${duration(b.start - start)} (${when(b.start)}) to +${duration(b.end - start)}${b.open ? ' (not ended)' : ''}`, `${duration(b.end - b.start)}`];
  const parts = [h('h4', {}, b.label), h('div', { class: 'muted' }, facts.join(' · '))];
  if (b.kind === 'model') {
    const asked = (b.message.tool_calls || []).map((c) => c.name);
    parts.push(h('div', {}, asked.length ? `asked for ${asked.join(', ')}` : 'answered without tool calls',
      b.firstToken ? ` · first token after ${duration(b.firstToken - b.start)} (counted from the bar's start, which includes building the context)` : ' · no time to first token (no text, or stored before carryon kept it)'));
    if (b.message.content) parts.push(h('div', { class: 'label' }, 'Text'), folded(b.message.content));
    if (b.message.tool_calls?.length) parts.push(h('div', { class: 'label' }, 'Tool calls'), folded(json(b.message.tool_calls)));
  }
  if (a) {
    parts.push(h('div', { class: 'muted' }, `step ${a.step}.${a.index} · ${a.effect} · journal status ${a.status}${a.approval ? ` · ${a.approval}` : ''} · call `, copyable(a.call_id || a.id)));
    parts.push(h('div', { class: 'label' }, 'Arguments'), folded(json(a.args)));
    if (b.kind === 'tool') {
      const res = b.call && b.call.result !== undefined ? b.call.result : a.result;
      const err = (b.call && b.call.error) || a.error;
      parts.push(h('div', { class: 'label' }, err ? 'Error' : 'Result'), folded(err ? (typeof err === 'string' ? err : json(err)) : res === undefined || res === null ? '(none)' : typeof res === 'string' ? res : json(res)));
    }
  }
  parts.push(h('div', { class: 'label' }, `Events (${b.events.length})`), folded(json(b.events.map((e) => ({ seq: e.seq, type: e.type, created_at: e.created_at, data: e.data })))));
  return h('div', { class: `wf-chosen ${b.kind}` }, ...parts);
}
