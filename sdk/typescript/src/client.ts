// The carryon client: the routes of the native API, each write with its own Idempotency-Key.
import { CarryonError } from "./errors.js";
import { streamEvents, type EventStreamOptions, type RunEvent } from "./events.js";
import { deepEqual, mergePatch } from "./mergepatch.js";
import { Paged, type Page } from "./paging.js";
import { Transport, type CallOptions, type ClientOptions, type WriteOptions } from "./transport.js";
import type * as T from "./types.js";

const enc = encodeURIComponent;

/** Options of a listing. */
export interface ListOptions extends CallOptions {
  /** Items per page (1–1000; the server's default 50). */
  limit?: number;
}

/** A change the update helper's callback may make to a session's working memory. */
export type UpdateFn = (memory: Record<string, unknown>, state: T.WorkingMemoryState) => Record<string, unknown> | void | Promise<Record<string, unknown> | void>;

/** Options of the update helper. */
export interface UpdateOptions extends CallOptions {
  /** How many times fn is applied at most before the last conflict is thrown (default 10). */
  attempts?: number;
}

/** What a run's client tool handler is given: the call and the run. */
export type ToolCallHandler = (call: T.RequiredToolCall, run: T.Run) => unknown | Promise<unknown>;

/** A decision on an action that waits for approval. */
export type ApprovalDecision = { decision: "approve"; arguments?: Record<string, unknown> } | { decision: "reject"; reason?: string };

/** Handlers of a followed run. */
export interface FollowOptions extends EventStreamOptions {
  /** Called with every event of the run, once each. */
  onEvent?: (e: RunEvent) => void | Promise<void>;
  /** Runs a client tool call; its answer (a string, or JSON-encoded otherwise) is the call's output. */
  onToolCall?: ToolCallHandler;
  /** Decides an action that waits for approval. */
  onApproval?: (action: T.Action, run: T.Run) => ApprovalDecision | Promise<ApprovalDecision>;
}

/** Carryon is a client of one carryon server. */
export class Carryon {
  /** The HTTP layer, for routes this client has no method for. */
  readonly transport: Transport;
  readonly sessions: Sessions;
  readonly runs: Runs;
  readonly memories: Memories;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.sessions = new Sessions(this.transport);
    this.runs = new Runs(this.transport);
    this.memories = new Memories(this.transport);
  }

  /** chat is the seed's short path: a message to a session (a new one without sessionId), answered when its run ends. */
  chat(input: Omit<T.ChatInput, "request_id" | "expected_version">, o: WriteOptions = {}): Promise<T.ChatResult> {
    return this.transport.json({ method: "POST", path: "/v1/chat", body: input, write: true, options: o });
  }

  /** me is the caller. */
  me(o: CallOptions = {}): Promise<T.User> {
    return this.transport.json({ method: "GET", path: "/v1/me", options: o });
  }

  /** agents lists the agent profiles the caller may use. */
  async agents(o: CallOptions = {}): Promise<T.Agent[]> {
    return (await this.transport.json<{ items: T.Agent[] }>({ method: "GET", path: "/v1/agents", options: o })).items;
  }

  /**
   * update is a read-modify-write of a session's working memory: it gives fn a copy of the
   * memory to change (or to return changed), and sends the difference with If-Match at the
   * version it was read at. session is an id, or a session (or memory state) already read with
   * its working_memory and version, which saves the first read. When another write got in first
   * (412, or 409 version_conflict) it reads again and applies fn again. Returns the memory as
   * stored (unchanged, and nothing written, when fn changed nothing).
   */
  async update(session: string | T.SessionView | T.WorkingMemoryState, fn: UpdateFn, o: UpdateOptions = {}): Promise<T.WorkingMemoryState> {
    const id = typeof session === "string" ? session : "session_id" in session ? session.session_id : session.id;
    let state: T.WorkingMemoryState | undefined =
      typeof session === "string"
        ? undefined
        : { session_id: id, version: session.version, memory_version: session.memory_version, working_memory: session.working_memory };
    const attempts = o.attempts ?? 10;
    for (let i = 1; ; i++) {
      state ??= await this.sessions.memory(id, o);
      const copy = structuredClone(state.working_memory);
      const next = (await fn(copy, state)) ?? copy;
      const patch = mergePatch(state.working_memory, next);
      if (Object.keys(patch).length === 0 || deepEqual(state.working_memory, next)) return state;
      try {
        return await this.sessions.patchMemory(id, patch, { signal: o.signal, ifMatch: state.version });
      } catch (err) {
        if (!(err instanceof CarryonError && err.code === "version_conflict") || i >= attempts) throw err;
        state = undefined; // read it again
      }
    }
  }
}

/** Sessions are the session routes, with messages and working memory. */
export class Sessions {
  constructor(private readonly t: Transport) {}

  /** create makes a session (or, with external_id, finds the caller's session with that id). */
  create(input: Omit<T.NewSession, "request_id" | "expected_version"> = {}, o: WriteOptions = {}): Promise<T.Session> {
    return this.t.json({ method: "POST", path: "/v1/sessions", body: input, write: true, options: o });
  }

  /** get reads a session with its working memory and its last messages (default 20). */
  get(id: string, o: CallOptions & { messages?: number } = {}): Promise<T.SessionView> {
    return this.t.json({ method: "GET", path: `/v1/sessions/${enc(id)}`, query: { messages: o.messages }, options: o });
  }

  /** list is the caller's sessions, newest first. */
  list(o: ListOptions & { status?: "active" | "closed" | "expired"; externalId?: string } = {}): Paged<T.Session> {
    return new Paged((cursor) =>
      this.t.json<Page<T.Session>>({ method: "GET", path: "/v1/sessions", query: { limit: o.limit, cursor, status: o.status, external_id: o.externalId }, options: o }),
    );
  }

  /** update changes a session's title, metadata or idle TTL. */
  update(id: string, change: Omit<T.SessionUpdate, "request_id" | "expected_version">, o: WriteOptions = {}): Promise<T.Session> {
    return this.t.json({ method: "PATCH", path: `/v1/sessions/${enc(id)}`, body: change, write: true, options: o });
  }

  /** close keeps the history and refuses writes until restore. */
  close(id: string, o: WriteOptions = {}): Promise<T.Session> {
    return this.t.json({ method: "POST", path: `/v1/sessions/${enc(id)}/close`, write: true, options: o });
  }

  /** restore reopens a closed or expired session. */
  restore(id: string, o: WriteOptions = {}): Promise<T.Session> {
    return this.t.json({ method: "POST", path: `/v1/sessions/${enc(id)}/restore`, write: true, options: o });
  }

  /** delete removes a session with everything in it. */
  async delete(id: string, o: WriteOptions = {}): Promise<void> {
    await this.t.send({ method: "DELETE", path: `/v1/sessions/${enc(id)}`, write: true, options: o });
  }

  /** fork makes a session that shares this one's history (at atVersion, default now). */
  fork(id: string, input: { at_version?: number; title?: string } = {}, o: WriteOptions = {}): Promise<T.Session> {
    return this.t.json({ method: "POST", path: `/v1/sessions/${enc(id)}/fork`, body: input, write: true, options: o });
  }

  /** append adds messages to a session. */
  append(id: string, messages: T.NewMessage[], o: WriteOptions = {}): Promise<T.AppendResult> {
    return this.t.json({ method: "POST", path: `/v1/sessions/${enc(id)}/messages`, body: { messages }, write: true, options: o });
  }

  /** messages is a session's messages, oldest first. */
  messages(id: string, o: ListOptions = {}): Paged<T.Message> {
    return new Paged((cursor) => this.t.json<Page<T.Message>>({ method: "GET", path: `/v1/sessions/${enc(id)}/messages`, query: { limit: o.limit, cursor }, options: o }));
  }

  /** deleteMessage deletes one message (a tombstone hides it, and every copy of its text is redacted). */
  deleteMessage(id: string, seq: number, o: WriteOptions = {}): Promise<T.Session> {
    return this.t.json({ method: "DELETE", path: `/v1/sessions/${enc(id)}/messages/${seq}`, write: true, options: o });
  }

  /** memory reads a session's working memory and the session's version. */
  memory(id: string, o: CallOptions = {}): Promise<T.WorkingMemoryState> {
    return this.t.json({ method: "GET", path: `/v1/sessions/${enc(id)}/memory`, options: o });
  }

  /** patchMemory applies a JSON merge patch (RFC 7396) to a session's working memory. */
  patchMemory(id: string, patch: Record<string, unknown>, o: WriteOptions = {}): Promise<T.WorkingMemoryState> {
    return this.t.json({ method: "PATCH", path: `/v1/sessions/${enc(id)}/memory`, body: { patch }, write: true, options: o });
  }

  /** memoryHistory is the revisions of a session's working memory, newest first. */
  memoryHistory(id: string, o: ListOptions = {}): Paged<T.MemoryRevision> {
    return new Paged((cursor) => this.t.json<Page<T.MemoryRevision>>({ method: "GET", path: `/v1/sessions/${enc(id)}/memory/history`, query: { limit: o.limit, cursor }, options: o }));
  }

  /** memoryDiff compares two revisions of the working memory by memory_version (0 is the empty document). */
  memoryDiff(id: string, from: number, to: number, o: CallOptions = {}): Promise<T.MemoryDiff> {
    return this.t.json({ method: "GET", path: `/v1/sessions/${enc(id)}/memory/diff`, query: { from, to }, options: o });
  }

  /** context is what the context builder would send the model now. */
  context(id: string, o: CallOptions = {}): Promise<T.ContextPreview> {
    return this.t.json({ method: "GET", path: `/v1/sessions/${enc(id)}/context`, options: o });
  }
}

/** Runs are the routes of the agent's runs: start, events, client tools, approvals. */
export class Runs {
  constructor(private readonly t: Transport) {}

  /** start appends the message to the session and queues a run. */
  start(sessionId: string, input: Omit<T.NewRun, "request_id" | "expected_version">, o: WriteOptions = {}): Promise<T.Run> {
    return this.t.json({ method: "POST", path: `/v1/sessions/${enc(sessionId)}/runs`, body: input, write: true, options: o });
  }

  /** get reads a run. */
  get(id: string, o: CallOptions = {}): Promise<T.Run> {
    return this.t.json({ method: "GET", path: `/v1/runs/${enc(id)}`, options: o });
  }

  /** list is a session's runs, newest first. */
  list(sessionId: string, o: ListOptions = {}): Paged<T.Run> {
    return new Paged((cursor) => this.t.json<Page<T.Run>>({ method: "GET", path: `/v1/sessions/${enc(sessionId)}/runs`, query: { limit: o.limit, cursor }, options: o }));
  }

  /** actions is a run's tool journal. */
  actions(id: string, o: ListOptions = {}): Paged<T.Action> {
    return new Paged((cursor) => this.t.json<Page<T.Action>>({ method: "GET", path: `/v1/runs/${enc(id)}/actions`, query: { limit: o.limit, cursor }, options: o }));
  }

  /** events is the run's event stream, resumed by Last-Event-ID after a lost connection: every event once. */
  events(id: string, o: EventStreamOptions = {}): AsyncGenerator<RunEvent> {
    return streamEvents(this.t, id, o);
  }

  /** cancel stops a run at its next step. */
  cancel(id: string, o: WriteOptions = {}): Promise<T.Run> {
    return this.t.json({ method: "POST", path: `/v1/runs/${enc(id)}/cancel`, write: true, options: o });
  }

  /** approve runs an action that waits for approval, with other arguments when given. */
  approve(id: string, actionId: string, args?: Record<string, unknown>, o: WriteOptions = {}): Promise<T.Run> {
    return this.t.json({ method: "POST", path: `/v1/runs/${enc(id)}/approve`, body: { action_id: actionId, decision: "approve", arguments: args }, write: true, options: o });
  }

  /** reject does not run an action that waits for approval; the model is told the reason. */
  reject(id: string, actionId: string, reason?: string, o: WriteOptions = {}): Promise<T.Run> {
    return this.t.json({ method: "POST", path: `/v1/runs/${enc(id)}/approve`, body: { action_id: actionId, decision: "reject", reason }, write: true, options: o });
  }

  /** toolOutputs answers the run's pending client tool calls. */
  toolOutputs(id: string, outputs: { call_id: string; output: string }[], o: WriteOptions = {}): Promise<T.Run> {
    return this.t.json({ method: "POST", path: `/v1/runs/${enc(id)}/tool_outputs`, body: { outputs }, write: true, options: o });
  }

  /**
   * follow reads a run's events until it ends, answering what it waits for: client tool calls
   * with onToolCall, approvals with onApproval. Without the handler a wait needs, it returns the
   * waiting run. Returns the run as it ended.
   */
  async follow(id: string, o: FollowOptions = {}): Promise<T.Run> {
    for await (const e of this.events(id, o)) {
      await o.onEvent?.(e);
      if (e.type === "run.requires_action") {
        const run = await this.get(id, o);
        if (run.status !== "requires_action" || !run.required_action) continue; // answered already
        if (!o.onToolCall) return run;
        const outputs = [];
        for (const call of run.required_action.tool_calls) {
          const out = await o.onToolCall(call, run);
          outputs.push({ call_id: call.call_id, output: typeof out === "string" ? out : JSON.stringify(out ?? null) });
        }
        await this.toolOutputs(id, outputs, { signal: o.signal });
      } else if (e.type === "run.waiting_approval") {
        const run = await this.get(id, o);
        if (run.status !== "waiting_approval" || !run.pending_action) continue;
        if (!o.onApproval) return run;
        const d = await o.onApproval(run.pending_action, run);
        if (d.decision === "approve") await this.approve(id, run.pending_action.id, d.arguments, { signal: o.signal });
        else await this.reject(id, run.pending_action.id, d.reason, { signal: o.signal });
      }
    }
    return this.get(id, o);
  }

  /** run starts a run on the session and follows it to its end (see follow). */
  async run(sessionId: string, input: Omit<T.NewRun, "request_id" | "expected_version">, o: FollowOptions & { ifMatch?: number | "*" } = {}): Promise<T.Run> {
    const run = await this.start(sessionId, input, { signal: o.signal, ifMatch: o.ifMatch });
    return this.follow(run.id, o);
  }
}

/** Memories are the caller's long-term memory: values under a namespace and a key, with search. */
export class Memories {
  constructor(private readonly t: Transport) {}

  private path(namespace: string, key: string): string {
    return `/v1/memories/${enc(namespace)}/${enc(key)}`;
  }

  /** put stores value under namespace/key (with text for search, and a TTL in seconds). ifMatch 0 puts only a new item. */
  put(namespace: string, key: string, item: { value: unknown; text?: string; ttl_seconds?: number }, o: WriteOptions = {}): Promise<T.MemoryItem> {
    return this.t.json({ method: "PUT", path: this.path(namespace, key), body: item, write: true, options: o });
  }

  /** get reads an item; undefined when there is none. */
  async get(namespace: string, key: string, o: CallOptions = {}): Promise<T.MemoryItem | undefined> {
    try {
      return await this.t.json<T.MemoryItem>({ method: "GET", path: this.path(namespace, key), options: o });
    } catch (err) {
      if (err instanceof CarryonError && err.code === "not_found") return undefined;
      throw err;
    }
  }

  /**
   * update is a read-modify-write of one item: fn gets its value (undefined when there is none)
   * and returns the new one, which is put with If-Match at the version read ("0" for a new item).
   * When another write got in first it reads again and applies fn again, up to attempts (10) times.
   */
  async update(
    namespace: string,
    key: string,
    fn: (value: unknown, item: T.MemoryItem | undefined) => { value: unknown; text?: string; ttl_seconds?: number } | Promise<{ value: unknown; text?: string; ttl_seconds?: number }>,
    o: UpdateOptions = {},
  ): Promise<T.MemoryItem> {
    const attempts = o.attempts ?? 10;
    for (let i = 1; ; i++) {
      const item = await this.get(namespace, key, o);
      const next = await fn(item === undefined ? undefined : structuredClone(item.value), item);
      try {
        return await this.put(namespace, key, next, { signal: o.signal, ifMatch: item?.version ?? 0 });
      } catch (err) {
        if (!(err instanceof CarryonError && err.code === "version_conflict") || i >= attempts) throw err;
      }
    }
  }

  /** delete forgets an item. */
  async delete(namespace: string, key: string, o: WriteOptions = {}): Promise<void> {
    await this.t.send({ method: "DELETE", path: this.path(namespace, key), write: true, options: o });
  }

  /** list is the caller's items by namespace and key, under namespace when given. */
  list(o: ListOptions & { namespace?: string } = {}): Paged<T.MemoryItem> {
    return new Paged((cursor) => this.t.json<Page<T.MemoryItem>>({ method: "GET", path: "/v1/memories", query: { namespace: o.namespace, limit: o.limit, cursor }, options: o }));
  }

  /** search is the caller's items that match the words of query, most relevant first. */
  search(query: string, o: ListOptions & { namespace?: string } = {}): Paged<T.MemoryItem> {
    return new Paged((cursor) =>
      this.t.json<Page<T.MemoryItem>>({ method: "POST", path: "/v1/memories/search", body: { query, namespace: o.namespace, limit: o.limit, cursor }, options: o, retry: true }),
    );
  }
}
