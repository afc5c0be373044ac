// A session page: its state and controls, the chat box with the live run, approvals and client
// tool outputs, the timeline, its schedules, the working memory (history, diff, editor), the
// usage (spend and budget, tokens per day and per run, the next turn's context make-up), the
// facts learned from it and the context preview.
import { api, stream, requestID } from './api.js';
import { h, field, json, when, errorBox, toast, confirmButton } from './dom.js';
import { memoryPanel } from './memory.js';
import { timelinePanel } from './timeline.js';
import { approvalCard } from './approvals.js';
import { schedulesPanel, newScheduleForm } from './schedules.js';
import { runsChart, contextBar } from './usage.js';
import { sessionSpend } from './spend.js';
import { factsPanel } from './facts.js';

const FINAL = ['succeeded', 'failed', 'cancelled', 'interrupted'];
const sid = (id) => encodeURIComponent(id);

// sessionView shows the session id; openRun, when given, is a run opened in the timeline.
export async function sessionView(id, show, openRun) {
  const base = `/v1/sessions/${sid(id)}`;
  let session = await api('GET', `${base}?messages=0`);
  const abort = new AbortController();
  let follow = null; // the AbortController of the followed run's stream

  const info = h('div', { class: 'card' });
  const controlsMsg = h('div', {});
  const controls = h('div', { class: 'row' });
  const live = h('div', { id: 'live', 'aria-live': 'polite' });
  const pending = h('div', {});
  const chatMsg = h('div', {});
  const memory = memoryPanel(base, () => refreshInfo());
  const timeline = timelinePanel(base, () => { refreshInfo(); memory.refresh(); }, openRun);
  const schedules = schedulesPanel(id, (run) => { refreshTimeline(); followRun(run); });
  const contextOut = h('div', {});
  const usageRuns = h('div', { id: 'usage-runs' });
  const usageContext = h('div', { id: 'usage-context' });
  const spend = sessionSpend(base);

  const refreshInfo = async () => {
    try { session = await api('GET', `${base}?messages=0`); } catch (e) { controlsMsg.replaceChildren(errorBox(e)); return; }
    info.replaceChildren(
      h('div', {}, 'Status: ', h('span', { class: 'status', id: 'session-status' }, session.status), ` · agent ${session.agent} · version `,
        h('span', { id: 'session-version' }, session.version), ` · ${session.message_count} messages · last activity ${when(session.last_active_at)}`),
      session.parent_id ? h('div', { class: 'muted' }, 'Forked from ', h('a', { href: `#/s/${sid(session.parent_id)}` }, session.parent_id), ` at version ${session.fork_version}`) : '',
      h('div', { class: 'muted' }, `id ${session.id} · created ${when(session.created_at)} · expires ${when(session.expires_at)}`));
    renderControls();
  };

  const write = async (label, method, path, body) => {
    try {
      const r = await api(method, path, body);
      toast(`${label}: done`);
      controlsMsg.replaceChildren();
      return r ?? true;
    } catch (e) { controlsMsg.replaceChildren(errorBox(e)); return null; }
  };

  const renderControls = () => {
    const [atLabel, at] = field('Fork at version', 'input', { type: 'number', min: 1, max: session.version, value: session.version });
    const [ftLabel, ft] = field('Fork title', 'input', { type: 'text', value: session.title ? `${session.title} (fork)` : '' });
    controls.replaceChildren(
      session.status === 'active'
        ? confirmButton('Close session', 'Close it? Writes are refused until it is restored.', async () => { if (await write('Close', 'POST', `${base}/close`, { request_id: requestID() })) refreshInfo(); }, 'primary')
        : confirmButton('Restore session', 'Reopen it? Writes and runs are taken again.', async () => { if (await write('Restore', 'POST', `${base}/restore`, { request_id: requestID() })) refreshInfo(); }, 'primary'),
      atLabel, ftLabel,
      confirmButton('Fork', 'Make a new session from this history?', async () => {
        const body = { at_version: Number(at.value), request_id: requestID() };
        if (ft.value.trim()) body.title = ft.value.trim();
        const f = await write('Fork', 'POST', `${base}/fork`, body);
        if (f) location.hash = `#/s/${sid(f.id)}`;
      }, 'primary'),
      confirmButton('Delete session', 'Delete it with all its history? This cannot be undone.', async () => {
        if (await write('Delete', 'DELETE', base, { request_id: requestID() })) location.hash = '#/sessions';
      }));
  };

  const refreshTimeline = async () => {
    const runs = await timeline.refresh();
    usageRuns.replaceChildren(runsChart(runs));
    spend.refresh();
    return runs;
  };

  // refreshContext draws the next turn's context make-up (and answers the preview, or null).
  const refreshContext = async () => {
    try {
      const c = await api('GET', `${base}/context`);
      usageContext.replaceChildren(contextBar(c));
      return c;
    } catch (e) { usageContext.replaceChildren(errorBox(e)); return null; }
  };

  // followRun streams a run's events into the live area until it ends.
  const followRun = async (run) => {
    if (follow) follow.abort();
    follow = new AbortController();
    const mine = follow;
    abort.signal.addEventListener('abort', () => mine.abort(), { once: true });
    // Each step's words are a paragraph of their own: the steps' texts are not run together.
    let para = null; let step = null;
    const status = h('span', { class: 'status', id: 'run-status' }, run.status);
    const text = h('div', { id: 'reply', class: 'msg assistant' });
    const say = (s, words) => {
      if (!para || s !== step) { para = h('p', {}); text.append(para); step = s; }
      para.textContent += words;
    };
    const log = h('ul', { class: 'muted', 'aria-label': 'Run events' });
    const cancel = h('button', { type: 'button', class: 'danger', onclick: async () => {
      try { await api('POST', `/v1/runs/${sid(run.id)}/cancel`, { request_id: requestID() }); toast('Cancel requested'); } catch (e) { pending.replaceChildren(errorBox(e)); }
    } }, 'Cancel run');
    live.replaceChildren(h('div', { class: 'row' }, `Run ${run.id}: `, status, cancel), text, log);
    if (run.status === 'waiting_approval') showApprovals(run);
    if (run.status === 'requires_action') showToolOutputs(run, run.required_action);
    try {
      await stream(run.id, 0, (ev) => {
        switch (ev.type) {
          case 'model.delta': if (ev.data.text) say(ev.data.step, ev.data.text); break;
          case 'run.started': status.textContent = 'running'; break;
          case 'tool.started': log.append(h('li', {}, `tool ${ev.data.tool} started`)); break;
          case 'tool.finished': log.append(h('li', {}, `tool ${ev.data.tool} ${ev.data.status}`)); break;
          case 'memory.updated': memory.refresh(); break;
          case 'message.appended': refreshTimeline(); refreshInfo(); break;
          case 'run.waiting_approval': status.textContent = 'waiting_approval'; showApprovals(run); refreshTimeline(); break;
          case 'run.requires_action': status.textContent = 'requires_action'; showToolOutputs(run, ev.data.required_action); refreshTimeline(); break;
          case 'run.approved': case 'run.tool_outputs': status.textContent = 'queued'; pending.replaceChildren(); break;
          case 'run.finished': case 'run.failed':
            status.textContent = ev.data.status;
            if (ev.data.reply && !para) say(null, ev.data.reply);
            if (ev.data.error) log.append(h('li', { class: 'bad' }, typeof ev.data.error === 'string' ? ev.data.error : json(ev.data.error)));
            cancel.remove(); pending.replaceChildren();
            break;
          default: break;
        }
      }, mine.signal);
    } catch (e) { if (!mine.signal.aborted) live.append(errorBox(e)); }
    if (!mine.signal.aborted) { refreshTimeline(); refreshInfo(); memory.refresh(); refreshContext(); }
  };

  // showApprovals shows the action a waiting_approval run waits for (its pending_action) with its decisions.
  const showApprovals = async (run) => {
    let now;
    try { now = await api('GET', `/v1/runs/${sid(run.id)}`); } catch (e) { pending.replaceChildren(errorBox(e)); return; }
    if (now.status !== 'waiting_approval' || !now.pending_action) return;
    pending.replaceChildren(h('h2', {}, 'Waiting for your decision'), approvalCard(run, now.pending_action, () => pending.replaceChildren()));
  };

  // showToolOutputs asks for the outputs of a requires_action run's client tool calls.
  const showToolOutputs = (run, required) => {
    const calls = required?.tool_calls || [];
    const msg = h('div', {});
    const inputs = calls.map((c) => field(`Output of ${c.name} (${c.call_id})`, 'textarea', { rows: 3 }));
    pending.replaceChildren(h('form', { 'aria-label': 'Client tool outputs', onsubmit: async (e) => {
      e.preventDefault();
      try {
        await api('POST', `/v1/runs/${sid(run.id)}/tool_outputs`, { request_id: requestID(), outputs: calls.map((c, i) => ({ call_id: c.call_id, output: inputs[i][1].value })) });
        toast('Outputs sent'); pending.replaceChildren();
      } catch (err) { msg.replaceChildren(errorBox(err)); }
    } }, h('h2', {}, 'The run needs your tool outputs'),
    ...calls.map((c, i) => h('div', { class: 'card' }, h('div', {}, `${c.name} called with`), h('pre', {}, json(c.arguments)), inputs[i][0])),
    h('button', { type: 'submit' }, 'Send outputs'), msg));
  };

  // The chat box.
  const [msgLabel, message] = field('Message', 'textarea', { rows: 3, name: 'message', required: true });
  const [mtLabel, multitask] = field('When the session is busy', 'select', { name: 'multitask' },
    h('option', { value: 'reject' }, 'refuse (reject)'), h('option', { value: 'enqueue' }, 'queue behind it (enqueue)'), h('option', { value: 'interrupt' }, 'interrupt it (interrupt)'));
  const [toolsLabel, tools] = field('Client-side tools (JSON array of {name, description, parameters}; optional)', 'textarea', { rows: 3, name: 'tools' });
  const chat = h('form', { 'aria-label': 'Chat', onsubmit: async (e) => {
    e.preventDefault();
    if (!message.value.trim()) return;
    const body = { message: message.value, multitask: multitask.value, request_id: requestID() };
    if (tools.value.trim()) {
      try { body.tools = JSON.parse(tools.value); } catch (err) { chatMsg.replaceChildren(errorBox(new Error(`The tools are not JSON: ${err.message}`))); return; }
    }
    try {
      const run = await api('POST', `${base}/runs`, body);
      message.value = ''; chatMsg.replaceChildren();
      refreshTimeline();
      followRun(run);
    } catch (err) {
      if (err.problem?.code === 'session_busy') {
        chatMsg.replaceChildren(h('div', { class: 'error', role: 'alert' }, `The session is busy with run ${err.problem.active_run_id || ''}. Choose to queue behind it or to interrupt it, and send again.`));
        multitask.focus();
      } else chatMsg.replaceChildren(errorBox(err));
    }
  } }, msgLabel, h('div', { class: 'row' }, mtLabel, h('button', { type: 'submit' }, 'Send')), h('details', {}, h('summary', {}, 'Client-side tools'), toolsLabel), chatMsg);

  const contextButton = h('button', { type: 'button', class: 'secondary', onclick: async () => {
    const c = await refreshContext();
    if (!c) return;
    try {
      contextOut.replaceChildren(
        h('p', {}, `${c.tokens} of ${c.budget} tokens (${c.encoding}${c.estimated ? ', estimated' : ''}) for ${c.model}; messages ${c.first_seq}–${c.last_seq}${c.unsummarized ? `; ${c.unsummarized} to summarize first` : ''}`),
        h('div', { class: 'tablewrap', tabindex: '0', role: 'region', 'aria-label': 'Context parts' }, h('table', { 'aria-label': 'Context parts' }, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Part'), h('th', { scope: 'col' }, 'Tokens'), h('th', { scope: 'col' }, 'Content'))),
          h('tbody', {}, ...c.parts.map((p) => h('tr', {}, h('td', {}, p.name), h('td', {}, p.tokens),
            h('td', {}, p.content || p.items ? h('details', {}, h('summary', {}, 'show'), h('pre', {}, p.content ?? json(p.items))) : '')))))),
        c.notes?.length ? h('ul', {}, ...c.notes.map((n) => h('li', {}, n))) : '');
    } catch (e) { contextOut.replaceChildren(errorBox(e)); }
  } }, 'Preview the context');

  show(session.title || session.id, info, controls, controlsMsg,
    h('section', { 'aria-labelledby': 'schedules-title' }, h('h2', { id: 'schedules-title' }, 'Schedules'), schedules.element,
      h('details', {}, h('summary', {}, 'New schedule'), newScheduleForm(id, () => schedules.refresh()))),
    h('div', { class: 'grid' },
      h('div', {}, h('h2', {}, 'Chat'), chat, live, pending, h('h2', {}, 'Timeline'), timeline.element),
      h('div', {}, memory.element,
        h('section', { 'aria-labelledby': 'usage-title' }, h('h2', { id: 'usage-title' }, 'Usage'), spend.el, usageRuns, usageContext),
        factsPanel(base),
        h('h2', {}, 'Context preview'), h('p', { class: 'muted' }, 'What the model sees at the next run, with tokens per part.'), contextButton, contextOut)));
  await refreshInfo();
  const runs = await refreshTimeline();
  memory.refresh(true);
  refreshContext();
  schedules.refresh();
  if (openRun) document.getElementById(`run-${openRun}`)?.scrollIntoView();
  const active = runs.find((r) => !FINAL.includes(r.status));
  if (active) followRun(active);
  return () => abort.abort();
}

