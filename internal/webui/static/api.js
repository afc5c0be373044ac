// The /v1 API with the key the user signed in with (kept in sessionStorage, never elsewhere).
const KEY = 'carryon.key';

export const key = () => sessionStorage.getItem(KEY);
export const setKey = (k) => sessionStorage.setItem(KEY, k);
export const clearKey = () => sessionStorage.removeItem(KEY);

// ApiError is a problem+json answer (or a network failure) as an Error.
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

// api sends one request and answers the decoded JSON body (null for 204); errors throw ApiError.
export async function api(method, path, body, headers = {}) {
  const h = { Authorization: `Bearer ${key()}`, ...headers };
  const init = { method, headers: h };
  if (body !== undefined) {
    h['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, { detail: `the server did not answer (${e.message})` });
  }
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { detail: text }; }
  if (!res.ok) {
    if (res.status === 401) window.dispatchEvent(new Event('carryon-unauthorized'));
    throw new ApiError(res.status, data || {});
  }
  return data;
}

// q makes a query string of the defined values of params.
export function q(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, v);
  const s = u.toString();
  return s ? `?${s}` : '';
}

// stream reads a run's events (GET /v1/runs/{id}/events) from after seq `after`, calling onEvent
// for each until the stream ends or signal aborts; a dropped connection resumes with
// Last-Event-ID. EventSource cannot send the Authorization header, so this reads the body itself.
// A model.delta without an id (seq 0) is a preview of a delta not stored yet: it is passed on and
// its stored copy skipped, so the text comes once.
export async function stream(runID, after, onEvent, signal) {
  let last = after || 0;
  let previewed = [];
  for (let tries = 0; tries < 30 && !signal.aborted; tries++) {
    let res;
    try {
      res = await fetch(`/v1/runs/${encodeURIComponent(runID)}/events`, {
        headers: { Authorization: `Bearer ${key()}`, Accept: 'text/event-stream', 'Last-Event-ID': String(last) },
        signal,
      });
    } catch (e) {
      if (signal.aborted) return last;
      await pause(1000, signal);
      continue;
    }
    if (!res.ok) throw new ApiError(res.status, await res.json().catch(() => ({})));
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    let ended = false;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const ev = parseBlock(block);
          if (!ev) continue;
          if (!ev.seq) {
            // A model delta previewed before it is stored: the cursor stays; its stored copy,
            // should a reconnect bring it, is skipped.
            previewed.push(JSON.stringify(ev.data));
            onEvent(ev);
            continue;
          }
          last = ev.seq;
          if (previewed.length) {
            const copy = ev.type === 'model.delta' && JSON.stringify(ev.data) === previewed[0];
            if (copy) { previewed.shift(); continue; }
            previewed = [];
          }
          onEvent(ev);
          if (ev.type === 'run.finished' || ev.type === 'run.failed') ended = true;
        }
      }
    } catch (e) {
      if (signal.aborted) return last;
    }
    if (ended || signal.aborted) return last;
    await pause(500, signal);
  }
  return last;
}

function parseBlock(block) {
  let data = '';
  for (const line of block.split('\n')) {
    if (line.startsWith('data:')) data += line.slice(5).trimStart();
  }
  if (!data) return null;
  try { return JSON.parse(data); } catch { return null; }
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

// requestID is a fresh idempotency key for one user action.
export const requestID = () => `ui-${crypto.randomUUID()}`;
