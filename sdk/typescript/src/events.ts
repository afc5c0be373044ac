// A run's event stream (GET /v1/runs/{id}/events, Server-Sent Events) that survives lost
// connections: it reconnects with Last-Event-ID set to the last event it yielded, so every stored
// event comes exactly once, and a model delta previewed before it was stored comes once too.
import { CarryonError, ConnectionError, type Problem } from "./errors.js";
import type { components } from "./openapi.js";
import { sleep, type CallOptions, type Transport } from "./transport.js";

/** An event of a run: seq 1, 2, … without gaps; a model.delta preview has seq 0. */
export type RunEvent = components["schemas"]["Event"];

/** The types of a run's events. */
export type RunEventType = RunEvent["type"];

/** Options of an event stream. */
export interface EventStreamOptions extends CallOptions {
  /** Start after this event's seq (default 0: from the first). */
  after?: number;
  /** Keep the stream open for new events until the run's last one (default true); false ends after the stored ones. */
  follow?: boolean;
  /** How many times in a row the stream reconnects without getting an event (default: the client's retries). */
  reconnects?: number;
}

interface Frame {
  id?: string;
  event?: string;
  data: string;
}

/** frames parses a Server-Sent Events body into its events, skipping comments (keepalives). */
async function* frames(body: ReadableStream<Uint8Array>): AsyncGenerator<Frame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let f: Frame = { data: "" };
  let dataLines = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return; // a frame cut in the middle is dropped: the reconnect sends it again
      buf += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, "");
        buf = buf.slice(nl + 1);
        if (line === "") {
          if (dataLines > 0 || f.event === "error") yield f;
          f = { data: "" };
          dataLines = 0;
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (name === "id") f.id = value;
        else if (name === "event") f.event = value;
        else if (name === "data") {
          f.data += (dataLines > 0 ? "\n" : "") + value;
          dataLines++;
        }
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** streamEvents yields the events of run runId, reconnecting after a lost connection. */
export async function* streamEvents(t: Transport, runId: string, o: EventStreamOptions = {}): AsyncGenerator<RunEvent> {
  const follow = o.follow ?? true;
  const reconnects = o.reconnects ?? t.retries;
  let last = o.after ?? 0;
  let previewed: string[] = []; // the data of previews whose stored copies have not come yet
  let failures = 0;
  for (;;) {
    let cause: unknown;
    // After a reconnect the server sends the previews not stored yet again: those already
    // yielded are counted here and not yielded twice.
    let resent = 0;
    const res = await t.send({
      method: "GET",
      path: `/v1/runs/${encodeURIComponent(runId)}/events`,
      query: follow ? undefined : { follow: "false" },
      accept: "text/event-stream",
      lastEventId: last,
      options: { signal: o.signal },
    });
    try {
      if (!res.body) throw new Error("the event stream has no body");
      for await (const f of frames(res.body)) {
        if (f.event === "error") {
          const err = new CarryonError(JSON.parse(f.data) as Problem);
          if (err.code !== "internal" && err.code !== "unavailable") throw err;
          cause = err; // perhaps passing (the server is stopping): resume
          break;
        }
        const e = JSON.parse(f.data) as RunEvent;
        if (!f.id && !e.seq) {
          const data = JSON.stringify(e.data ?? null); // a model delta, before it is stored
          failures = 0;
          if (resent < previewed.length && previewed[resent] === data) {
            resent++; // yielded before the reconnect
            continue;
          }
          previewed = [...previewed.slice(0, resent), data];
          resent++;
          yield e;
          continue;
        }
        if (!e.seq) e.seq = Number(f.id);
        if (e.seq <= last) continue; // sent again after a reconnect
        last = e.seq;
        failures = 0;
        if (previewed.length > 0) {
          if (e.type === "model.delta" && JSON.stringify(e.data ?? null) === previewed[0]) {
            previewed.shift(); // the stored copy of a preview already yielded
            resent = Math.max(resent - 1, 0);
            continue;
          }
          previewed = [];
          resent = 0;
        }
        yield e;
        if (e.type === "run.finished" || e.type === "run.failed") return;
      }
      if (cause === undefined) {
        if (!follow) return; // the server ended the stream after the stored events
        cause = new Error("the event stream ended before the run's last event");
      }
    } catch (err) {
      if (o.signal?.aborted || err instanceof CarryonError) throw err;
      cause = err; // the connection dropped
    }
    failures++;
    if (failures > reconnects) {
      throw new ConnectionError(`carryon: the event stream of run ${runId} broke ${failures} times in a row after event ${last}: ${String(cause)}`, failures, cause);
    }
    await sleep(t.backoff(failures), o.signal);
  }
}
