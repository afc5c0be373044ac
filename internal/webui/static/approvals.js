// The decision on the action a waiting_approval run stopped on: a call whose tool asks for
// approval before it runs (approve, approve with edited arguments, reject), or a call a crash cut
// off between its journaled start and its outcome (run it again, mark it done, skip it).
import { api, requestID } from './api.js';
import { h, field, json, when, errorBox, toast } from './dom.js';

const sid = (id) => encodeURIComponent(id);

// What is known of a call cut off by a crash, by its journal status.
const CUT = {
  started: 'The server stopped after this call was journaled as started and before its outcome was: it may or may not have taken effect.',
  unknown: 'The tool was asked whether this call took effect and could not tell.',
};

// approvalCard is the card of action a of run, with its decisions; done is called once one is accepted.
export function approvalCard(run, a, done) {
  const msg = h('div', {});
  const decide = async (body) => {
    try {
      await api('POST', `/v1/runs/${sid(run.id)}/approve`, { action_id: a.id, request_id: requestID(), ...body });
      toast(`Decision sent: ${body.decision}`);
      done();
    } catch (e) { msg.replaceChildren(errorBox(e)); }
  };
  const before = a.approval === 'required';
  const facts = h('ul', { class: 'muted' },
    h('li', {}, `step ${a.step}, call ${a.call_id}, attempt ${a.attempt}, started ${when(a.started_at)}`),
    h('li', {}, `idempotency key ${a.idempotency_key}`),
    a.fingerprint_before ? h('li', {}, `fingerprint before: ${a.fingerprint_before}`) : '',
    a.fingerprint_after ? h('li', {}, `fingerprint after: ${a.fingerprint_after}`) : '');
  if (before) {
    const [argsLabel, args] = field('Arguments (JSON object)', 'textarea', { rows: 6, value: json(a.args) });
    const [reasonLabel, reason] = field('Reason (for a rejection)', 'input', { type: 'text' });
    return h('section', { class: 'card', 'aria-label': `Action ${a.tool}` },
      h('h3', {}, `${a.tool} (${a.effect}) asks for approval before it runs`), facts, argsLabel, reasonLabel,
      h('div', { class: 'row' },
        h('button', { type: 'button', onclick: () => decide({ decision: 'approve' }) }, 'Approve'),
        h('button', { type: 'button', onclick: () => {
          let parsed; try { parsed = JSON.parse(args.value); } catch (e) { msg.replaceChildren(errorBox(new Error(`The arguments are not JSON: ${e.message}`))); return; }
          decide({ decision: 'approve', arguments: parsed });
        } }, 'Approve with edited arguments'),
        h('button', { type: 'button', class: 'danger', onclick: () => decide({ decision: 'reject', ...(reason.value ? { reason: reason.value } : {}) }) }, 'Reject')),
      msg);
  }
  const [resultLabel, result] = field('Result to tell the model (for mark done; optional)', 'input', { type: 'text', name: 'mark-done-result' });
  return h('section', { class: 'card', 'aria-label': `Action ${a.tool}` },
    h('h3', {}, `${a.tool} (${a.effect}) was cut off by a crash: ${a.status}`),
    h('p', {}, CUT[a.status] || `Its journal says ${a.status}.`, ` carryon cannot check a${/^[aeiou]/.test(a.effect) ? 'n' : ''} ${a.effect} tool's effect, so you decide: run it again, mark it done (it took effect), or skip it (the model is told it was skipped).`),
    facts, h('div', {}, 'Arguments'), h('pre', {}, json(a.args)), resultLabel,
    h('div', { class: 'row' },
      h('button', { type: 'button', onclick: () => decide({ decision: 'rerun' }) }, 'Run it again'),
      h('button', { type: 'button', onclick: () => decide({ decision: 'mark_done', ...(result.value ? { result: result.value } : {}) }) }, 'Mark done'),
      h('button', { type: 'button', class: 'danger', onclick: () => decide({ decision: 'skip' }) }, 'Skip')),
    msg);
}
