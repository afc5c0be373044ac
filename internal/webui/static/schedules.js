// Schedules (docs/SCHEDULES.md): a session's, or every one of the user's, with their timing,
// time zone, next fire time, state and last run, and pause, resume, run now and delete; a form
// on the session page makes one.
import { api, q, requestID } from './api.js';
import { h, field, when, errorBox, toast, confirmButton, stacked } from './dom.js';

const sid = (id) => encodeURIComponent(id);

// timing says when a schedule fires: its cron (in its time zone), interval or instant.
const timing = (s) => (s.cron ? `cron ${s.cron} (${s.timezone})` : s.every ? `every ${s.every}` : `at ${when(s.at)}`);

// time is a <time> of an instant in the user's locale, with its UTC form as the datetime.
const time = (t) => (t ? h('time', { datetime: t, title: t }, when(t)) : '—');

// runLink links a run to its session's page with the run opened.
export const runLink = (sessionID, runID) => h('a', { href: `#/s/${sid(sessionID)}/${sid(runID)}` }, runID);

// schedulesPanel lists the schedules of the session sessionID (every session's when it is
// empty); onRun is told of a run "Run now" started.
export function schedulesPanel(sessionID, onRun = () => {}) {
  const element = h('div', { id: sessionID ? 'session-schedules' : 'schedules' });
  const msg = h('div', {});
  const body = h('div', {});
  element.append(msg, body);

  const refresh = async () => {
    try {
      let items = []; let cursor = '';
      do {
        const page = await api('GET', `${sessionID ? `/v1/sessions/${sid(sessionID)}/schedules` : '/v1/schedules'}${q({ limit: 100, cursor })}`);
        items = items.concat(page.items); cursor = page.next_cursor || '';
      } while (cursor && items.length < 2000);
      body.replaceChildren(items.length ? table(items) : h('p', { class: 'muted' }, 'No schedules.'));
      element.dataset.loaded = String(items.length);
    } catch (e) { msg.replaceChildren(errorBox(e)); }
  };

  const act = async (label, method, path, body) => {
    try {
      const r = await api(method, path, body);
      toast(`${label}: done`); msg.replaceChildren();
      await refresh();
      return r ?? true;
    } catch (e) { msg.replaceChildren(errorBox(e)); return null; }
  };

  const table = (items) => h('div', { class: 'tablewrap', tabindex: '0', role: 'region', 'aria-label': 'Schedules' }, stacked(h('table', { 'aria-label': 'Schedules' },
    h('thead', {}, h('tr', {}, ...[sessionID ? null : 'Session', 'When', 'Message', 'State', 'Next fire', 'Last tick', 'Actions'].filter(Boolean).map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...items.map(row)))));

  const row = (s) => {
    const path = `/v1/schedules/${sid(s.id)}`;
    const name = `schedule ${s.id}`;
    return h('tr', { 'data-schedule': s.id },
      sessionID ? null : h('td', {}, h('a', { href: `#/s/${sid(s.session_id)}` }, s.session_id)),
      h('td', {}, h('div', {}, timing(s)), h('div', { class: 'muted id' }, s.id),
        h('div', { class: 'muted' }, `overlap ${s.overlap} · catch-up ${s.catch_up}${s.until ? ` · until ${when(s.until)}` : ''}${s.agent ? ` · agent ${s.agent}` : ''}`)),
      h('td', { class: 'wrap' }, s.message),
      h('td', {}, h('span', { class: 'status' }, s.status), h('div', { class: 'muted' }, `fired ${s.fired}×`)),
      h('td', { class: 'next-fire' }, s.status === 'active' ? time(s.next_fire_at) : '—'),
      h('td', { class: 'last-tick' }, s.last_tick ? [time(s.last_tick), h('div', {}, s.last_outcome || ''),
        s.last_run_id ? h('div', {}, 'run ', runLink(s.session_id, s.last_run_id)) : null,
        s.last_error ? h('div', { class: 'bad' }, s.last_error) : null] : 'never'),
      h('td', {}, h('div', { class: 'row' },
        s.status === 'active' ? h('button', { type: 'button', class: 'secondary', 'aria-label': `Pause ${name}`, onclick: () => act('Pause', 'PATCH', path, { paused: true, request_id: requestID() }) }, 'Pause') : null,
        s.status === 'paused' ? h('button', { type: 'button', class: 'secondary', 'aria-label': `Resume ${name}`, onclick: () => act('Resume', 'PATCH', path, { paused: false, request_id: requestID() }) }, 'Resume') : null,
        h('button', { type: 'button', class: 'secondary', 'aria-label': `Run now: ${name}`, onclick: async () => { const r = await act('Run now', 'POST', `${path}/run`, { request_id: requestID() }); if (r) onRun(r); } }, 'Run now'),
        confirmButton('Delete', `Delete ${name}? It fires no more.`, () => act('Delete', 'DELETE', path, { request_id: requestID() })))));
  };
  return { element, refresh };
}

// newScheduleForm makes a schedule on the session sessionID; done is called with it.
export function newScheduleForm(sessionID, done) {
  const [kindLabel, kind] = field('Kind', 'select', { name: 'schedule-kind' },
    h('option', { value: 'cron' }, 'cron (5 fields)'), h('option', { value: 'every' }, 'every (a duration)'), h('option', { value: 'at' }, 'at (one time)'));
  const [whenLabel, whenInput] = field('Cron, interval or time', 'input', { type: 'text', name: 'schedule-when', required: true, placeholder: '0 8 * * 1-5' });
  const [tzLabel, tz] = field('Time zone', 'input', { type: 'text', name: 'schedule-timezone', value: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC' });
  const [msgLabel, message] = field('Message', 'input', { type: 'text', name: 'schedule-message', required: true });
  const [ovLabel, overlap] = field('While a run is going', 'select', { name: 'schedule-overlap' },
    h('option', { value: 'skip' }, 'skip the tick'), h('option', { value: 'enqueue' }, 'queue behind it'));
  const [cuLabel, catchUp] = field('Missed ticks', 'select', { name: 'schedule-catch-up' },
    h('option', { value: 'none' }, 'none'), h('option', { value: 'latest' }, 'the latest, once'));
  const out = h('div', {});
  kind.addEventListener('change', () => { whenInput.placeholder = { cron: '0 8 * * 1-5', every: '15m', at: '2026-12-24T08:00:00+01:00' }[kind.value]; });
  return h('form', { 'aria-label': 'New schedule', onsubmit: async (e) => {
    e.preventDefault();
    const body = { [kind.value]: whenInput.value.trim(), message: message.value, overlap: overlap.value, catch_up: catchUp.value, request_id: requestID() };
    if (kind.value === 'cron' && tz.value.trim()) body.timezone = tz.value.trim();
    try {
      const s = await api('POST', `/v1/sessions/${sid(sessionID)}/schedules`, body);
      toast(`Schedule ${s.id} created`); out.replaceChildren(); whenInput.value = ''; message.value = '';
      done(s);
    } catch (err) { out.replaceChildren(errorBox(err)); }
  } }, h('div', { class: 'row' }, kindLabel, whenLabel, tzLabel), h('div', { class: 'row' }, msgLabel, ovLabel, cuLabel, h('button', { type: 'submit' }, 'Create schedule')), out);
}

// schedulesView is every schedule of the user (#/schedules).
export async function schedulesView(show) {
  const panel = schedulesPanel('');
  show('Schedules', h('p', { class: 'muted' }, 'Every schedule of your sessions. A session\'s page makes new ones.'), panel.element);
  await panel.refresh();
}
