// The HTTP layer of the client: one request with its headers, an Idempotency-Key on every write
// (the same key on each retry of it), and retries with backoff that honour Retry-After.
import { CarryonError, ConnectionError, type Problem, type ProblemCode } from "./errors.js";

/** Options of a Carryon client. */
export interface ClientOptions {
  /** The server, such as "http://127.0.0.1:8420" (no trailing /v1). */
  baseUrl: string;
  /** An API key (ck_…), sent as Authorization: Bearer. */
  apiKey: string;
  /** The fetch to use; default the platform's. */
  fetch?: typeof fetch;
  /** How many times a request is sent again after a network error, a 5xx, a 429 or a 409 request_in_flight (default 6). */
  retries?: number;
  /** The first wait before a retry in milliseconds, doubled at each retry (default 250). */
  backoffMs?: number;
  /** The longest wait between two retries in milliseconds, also the most a Retry-After is honoured (default 8000). */
  maxBackoffMs?: number;
  /** Makes the Idempotency-Key of each logical write; default crypto.randomUUID. */
  newRequestId?: () => string;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

/** Options every call of the client takes. */
export interface CallOptions {
  /** Ends the call (and its retries) when aborted. */
  signal?: AbortSignal;
}

/** Options of a write: its request id and, where the route takes one, its expected version. */
export interface WriteOptions extends CallOptions {
  /** The Idempotency-Key of this write; default a new one. Pass the same id to repeat a write on purpose. */
  requestId?: string;
  /** The session (or long-term item) version this write was computed from, sent as If-Match; "*" for any. */
  ifMatch?: number | "*";
}

/** A request the transport sends. */
export interface Call {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** A write that takes a request id: it gets an Idempotency-Key and is retried with it. */
  write?: boolean;
  /** Retry network errors and retryable answers (default: reads and keyed writes). */
  retry?: boolean;
  accept?: string;
  lastEventId?: number;
  options?: WriteOptions;
}

const retryableCodes: ReadonlySet<ProblemCode> = new Set(["request_in_flight", "too_many_requests", "internal", "unavailable"]);

/** Transport sends requests to one carryon server. */
export class Transport {
  readonly baseUrl: string;
  readonly retries: number;
  private readonly apiKey: string;
  private readonly fetch: typeof fetch;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly newRequestId: () => string;
  private readonly headers: Record<string, string>;

  constructor(o: ClientOptions) {
    if (!o.baseUrl) throw new TypeError("carryon: baseUrl is required");
    if (!o.apiKey) throw new TypeError("carryon: apiKey is required");
    this.baseUrl = o.baseUrl.replace(/\/+$/, "");
    this.apiKey = o.apiKey;
    this.fetch = o.fetch ?? globalThis.fetch.bind(globalThis);
    this.retries = o.retries ?? 6;
    this.backoffMs = o.backoffMs ?? 250;
    this.maxBackoffMs = o.maxBackoffMs ?? 8000;
    this.newRequestId = o.newRequestId ?? (() => globalThis.crypto.randomUUID());
    this.headers = o.headers ?? {};
  }

  /** backoff is the wait before retry number n (1, 2, …): doubling, capped, with jitter. */
  backoff(n: number): number {
    const full = Math.min(this.maxBackoffMs, this.backoffMs * 2 ** Math.min(n - 1, 30));
    return full / 2 + Math.random() * (full / 2);
  }

  /** send sends call until it gets a good answer, and returns it; it throws CarryonError or ConnectionError. */
  async send(call: Call): Promise<Response> {
    const o = call.options ?? {};
    const headers: Record<string, string> = { ...this.headers, Authorization: `Bearer ${this.apiKey}`, Accept: call.accept ?? "application/json" };
    let body: string | undefined;
    if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers["Content-Type"] = "application/json";
    }
    if (call.write) headers["Idempotency-Key"] = o.requestId ?? this.newRequestId();
    if (o.ifMatch !== undefined) headers["If-Match"] = o.ifMatch === "*" ? "*" : `"${o.ifMatch}"`;
    if (call.lastEventId !== undefined && call.lastEventId > 0) headers["Last-Event-ID"] = String(call.lastEventId);
    const url = this.url(call.path, call.query);
    const retry = call.retry ?? (call.method === "GET" || call.write === true);
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetch(url, { method: call.method, headers, body, signal: o.signal });
      } catch (err) {
        if (o.signal?.aborted) throw err;
        if (!retry || attempt > this.retries) {
          throw new ConnectionError(`carryon: ${call.method} ${call.path}: no answer after ${attempt} attempt(s): ${String(err)}`, attempt, err);
        }
        await sleep(this.backoff(attempt), o.signal);
        continue;
      }
      if (res.ok || res.status === 304) return res;
      const err = await problemOf(res);
      if (retry && attempt <= this.retries && retryableCodes.has(err.code) && err.status !== 501) {
        const wait = err.retryAfter !== undefined ? Math.min(err.retryAfter * 1000, this.maxBackoffMs) : this.backoff(attempt);
        await sleep(wait, o.signal);
        continue;
      }
      throw err;
    }
  }

  /** json sends call and decodes its JSON answer (undefined for 204). */
  async json<T>(call: Call): Promise<T> {
    const res = await this.send(call);
    if (res.status === 204 || res.status === 304) return undefined as T;
    return (await res.json()) as T;
  }

  private url(path: string, query?: Call["query"]): string {
    const u = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v !== undefined) u.searchParams.set(k, String(v));
    }
    return u.toString();
  }
}

/** problemOf reads the problem of an error answer; an answer that is not one gets a code by its status. */
export async function problemOf(res: Response): Promise<CarryonError> {
  const text = await res.text().catch(() => "");
  const init = { retryAfter: retryAfter(res.headers.get("Retry-After")), requestId: res.headers.get("X-Request-Id") ?? undefined };
  try {
    const p = JSON.parse(text) as Problem;
    if (p && typeof p.code === "string" && typeof p.status === "number") return new CarryonError(p, init);
  } catch {
    // not a problem: described below
  }
  const code: ProblemCode = res.status === 429 ? "too_many_requests" : res.status === 503 ? "unavailable" : res.status >= 500 ? "internal" : "invalid_request";
  return new CarryonError(
    { type: "about:blank", title: res.statusText, status: res.status, code, detail: `the server answered ${res.status} without a problem: ${text.slice(0, 200)}` },
    init,
  );
}

/** retryAfter reads a Retry-After header (seconds or an HTTP date) as seconds. */
function retryAfter(v: string | null): number | undefined {
  if (v === null || v.trim() === "") return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

/** sleep waits ms milliseconds, or until signal is aborted (then it throws the abort reason). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
