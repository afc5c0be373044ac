// A session page: its state and controls, the chat box with the live run, approvals and client
// tool outputs, the timeline, the working memory (history, diff, editor) and the context preview.
import { api, q, stream, requestID } from './api.js';
import { h, field, json, when, errorBox, toast, confirmButton } from './dom.js';
import { memoryPanel } from './memory.js';
import { actionsTable, runSummary } from './runs.js';

const FINAL = ['succeeded', 'failed', 'cancelled', 'interrupted'];
const sid = (id) => encodeURIComponent(id);

export async function sessionView(id, show) {
  const base = `/v1/sessions/${sid(id)}`;
  let session = await api('GET', `${base}?messages=0`);
  const abort = new AbortController();
  let follow = null; // the AbortController of the followed run's stream

  const info = h('div', { class: 'card' });
  const controlsMsg = h('div', {});
  const controls = h('div', { class: 'row' });
  const timeline = h('div', {});
  const live = h('div', { id: 'live', 'aria-live': 'polite' });
  const pending = h('div', {});
  const chatMsg = h('div', {});
  const memory = memoryPanel(base, () => refreshInfo());
  const contextOut = h('div', {});

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
        : h('button', { type: 'button', onclick: async () => { if (await write('Restore', 'POST', `${base}/restore`, { request_id: requestID() })) refreshInfo(); } }, 'Restore session'),
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

  // The timeline: messages in order, each run after the message that triggered it.
  const refreshTimeline = async () => {
    try {
      let msgs = []; let cursor = '';
      do {
        const page = await api('GET', `${base}/messages${q({ limit: 1000, cursor })}`);
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
        items.push(messageItem(m));
        for (const r of byTrigger.get(m.seq) || []) items.push(runItem(r));
        byTrigger.delete(m.seq);
      }
      for (const list of byTrigger.values()) for (const r of list) items.push(runItem(r));
      timeline.replaceChildren(...(items.length ? items : [h('p', { class: 'muted' }, 'No messages yet.')]));
      return runs;
    } catch (e) { timeline.replaceChildren(errorBox(e)); return []; }
  };

  // followRun streams a run's events into the live area until it ends.
  const followRun = async (run) => {
    if (follow) follow.abort();
    follow = new AbortController();
    const mine = follow;
    abort.signal.addEventListener('abort', () => mine.abort(), { once: true });
    let reply = '';
    const status = h('span', { class: 'status', id: 'run-status' }, run.status);
    const text = h('div', { id: 'reply', class: 'msg assistant' });
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
          case 'model.delta': reply += ev.data.text || ''; text.textContent = reply; break;
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
            if (ev.data.reply && !reply) text.textContent = ev.data.reply;
            if (ev.data.error) log.append(h('li', { class: 'bad' }, typeof ev.data.error === 'string' ? ev.data.error : json(ev.data.error)));
            cancel.remove(); pending.replaceChildren();
            break;
          default: break;
        }
      }, mine.signal);
    } catch (e) { if (!mine.signal.aborted) live.append(errorBox(e)); }
    if (!mine.signal.aborted) { refreshTimeline(); refreshInfo(); memory.refresh(); }
  };

  // showApprovals lists the actions a waiting_approval run waits for, with their decisions.
  const showApprovals = async (run) => {
    let actions;
    try { actions = (await api('GET', `/v1/runs/${sid(run.id)}/actions${q({ limit: 1000 })}`)).items; } catch (e) { pending.replaceChildren(errorBox(e)); return; }
    const waiting = actions.filter((a) => (a.status === 'waiting' && a.approval === 'required') || (a.status === 'started' || a.status === 'unknown'));
    pending.replaceChildren(h('h2', {}, 'Waiting for your decision'), ...waiting.map((a) => approvalCard(run, a)));
  };
  const approvalCard = (run, a) => {
    const msg = h('div', {});
    const decide = async (body) => {
      try {
        await api('POST', `/v1/runs/${sid(run.id)}/approve`, { action_id: a.id, request_id: requestID(), ...body });
        toast(`Decision sent: ${body.decision}`);
        pending.replaceChildren();
      } catch (e) { msg.replaceChildren(errorBox(e)); }
    };
    const before = a.approval === 'required';
    const [argsLabel, args] = field('Arguments (JSON object)', 'textarea', { rows: 6, value: json(a.args) });
    const [reasonLabel, reason] = field(before ? 'Reason (for a rejection)' : 'Result (for mark done)', 'input', { type: 'text' });
    const buttons = before ? [
      h('button', { type: 'button', onclick: () => decide({ decision: 'approve' }) }, 'Approve'),
      h('button', { type: 'button', onclick: () => {
        let parsed; try { parsed = JSON.parse(args.value); } catch (e) { msg.replaceChildren(errorBox(new Error(`The arguments are not JSON: ${e.message}`))); return; }
        decide({ decision: 'approve', arguments: parsed });
      } }, 'Approve with edited arguments'),
      h('button', { type: 'button', class: 'danger', onclick: () => decide({ decision: 'reject', ...(reason.value ? { reason: reason.value } : {}) }) }, 'Reject'),
    ] : [
      h('button', { type: 'button', onclick: () => decide({ decision: 'rerun' }) }, 'Run it again'),
      h('button', { type: 'button', onclick: () => decide({ decision: 'mark_done', ...(reason.value ? { result: reason.value } : {}) }) }, 'Mark done'),
      h('button', { type: 'button', class: 'danger', onclick: () => decide({ decision: 'skip' }) }, 'Skip'),
    ];
    return h('section', { class: 'card', 'aria-label': `Action ${a.tool}` },
      h('h3', {}, `${a.tool} (${a.effect}, ${before ? 'asks for approval before it runs' : `cut off by a crash: ${a.status}`})`),
      h('div', { class: 'muted' }, `step ${a.step} · call ${a.call_id} · attempt ${a.attempt}`),
      a.fingerprint_before ? h('div', { class: 'muted' }, `fingerprint before: ${a.fingerprint_before}`) : '',
      argsLabel, reasonLabel, h('div', { class: 'row' }, ...buttons), msg);
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
    try {
      const c = await api('GET', `${base}/context`);
      contextOut.replaceChildren(
        h('p', {}, `${c.tokens} of ${c.budget} tokens (${c.encoding}${c.estimated ? ', estimated' : ''}) for ${c.model}; messages ${c.first_seq}–${c.last_seq}${c.unsummarized ? `; ${c.unsummarized} to summarize first` : ''}`),
        h('div', { class: 'tablewrap' }, h('table', { 'aria-label': 'Context parts' }, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Part'), h('th', { scope: 'col' }, 'Tokens'), h('th', { scope: 'col' }, 'Content'))),
          h('tbody', {}, ...c.parts.map((p) => h('tr', {}, h('td', {}, p.name), h('td', {}, p.tokens),
            h('td', {}, p.content || p.items ? h('details', {}, h('summary', {}, 'show'), h('pre', {}, p.content ?? json(p.items))) : '')))))),
        c.notes?.length ? h('ul', {}, ...c.notes.map((n) => h('li', {}, n))) : '');
    } catch (e) { contextOut.replaceChildren(errorBox(e)); }
  } }, 'Preview the context');

  show(session.title || session.id, info, controls, controlsMsg,
    h('div', { class: 'grid' },
      h('div', {}, h('h2', {}, 'Chat'), chat, live, pending, h('h2', {}, 'Timeline'), timeline),
      h('div', {}, memory.element, h('h2', {}, 'Context preview'), h('p', { class: 'muted' }, 'What the model sees at the next run, with tokens per part.'), contextButton, contextOut)));
  await refreshInfo();
  const runs = await refreshTimeline();
  memory.refresh(true);
  const active = runs.find((r) => !FINAL.includes(r.status));
  if (active) followRun(active);
  return () => abort.abort();
}

function messageItem(m) {
  const deleted = m.deleted || m.tombstone || m.deleted_at;
  return h('article', { class: `msg ${m.role}`, 'aria-label': `Message ${m.seq} (${m.role})` },
    h('div', { class: 'meta' }, `#${m.seq} ${m.role}${m.name ? ` (${m.name})` : ''}${m.kind === 'summary' ? ` · summary of messages ${m.covers_from}–${m.covers_to}` : ''} · v${m.version} · ${m.tokens} tokens · ${when(m.created_at)}${m.tool_call_id ? ` · answers ${m.tool_call_id}` : ''}`),
    deleted ? h('div', { class: 'muted' }, '(deleted)') : h('div', { class: 'content' }, m.content),
    ...(m.tool_calls || []).map((c) => h('div', {}, h('span', { class: 'muted' }, `calls ${c.name} (${c.id}) with`), h('pre', {}, json(c.arguments)))));
}

function runItem(r) {
  const body = h('div', {});
  const d = h('details', { class: 'card' }, h('summary', {}, runSummary(r)), body);
  d.addEventListener('toggle', async () => {
    if (!d.open || body.childElementCount) return;
    body.append(r.reply ? h('div', {}, 'Reply: ', r.reply) : '', r.error ? h('div', { class: 'bad' }, 'Error: ', typeof r.error === 'string' ? r.error : json(r.error)) : '');
    try {
      body.append(actionsTable((await api('GET', `/v1/runs/${sid(r.id)}/actions${q({ limit: 1000 })}`)).items));
    } catch (e) { body.append(errorBox(e)); }
  });
  return d;
}
