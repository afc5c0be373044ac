// The carryon client: the routes of the native API, each write with its own Idempotency-Key.
import { CarryonError } from "./errors.js";
import { Memories, type UpdateOptions } from "./memories.js";
import { deepEqual, mergePatch } from "./mergepatch.js";
import { Runs } from "./runs.js";
import { Sessions } from "./sessions.js";
import { Users } from "./users.js";
import { Transport, type CallOptions, type ClientOptions, type WriteOptions } from "./transport.js";
import type * as T from "./types.js";

/** A change the update helper's callback may make to a session's working memory. */
export type UpdateFn = (memory: Record<string, unknown>, state: T.WorkingMemoryState) => Record<string, unknown> | void | Promise<Record<string, unknown> | void>;

/** Carryon is a client of one carryon server. */
export class Carryon {
  /** The HTTP layer, for routes this client has no method for. */
  readonly transport: Transport;
  readonly sessions: Sessions;
  readonly runs: Runs;
  readonly memories: Memories;
  readonly users: Users;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.sessions = new Sessions(this.transport);
    this.runs = new Runs(this.transport);
    this.memories = new Memories(this.transport);
    this.users = new Users(this.transport);
  }

  /** chat is the seed's short path: a message to a session (a new one without sessionId), answered when its run ends. */
  chat(input: Omit<T.ChatInput, "request_id" | "expected_version">, o: WriteOptions = {}): Promise<T.ChatResult> {
    return this.transport.json({ method: "POST", path: "/v1/chat", body: input, write: true, options: o });
  }

  /** me is the caller. */
  me(o: CallOptions = {}): Promise<T.User> {
    return this.transport.json({ method: "GET", path: "/v1/me", options: o });
  }

  /** usage is the caller's spend today, this month and on each of the last `days` UTC days (default 30), with its budgets. */
  usage(o: CallOptions & { days?: number } = {}): Promise<T.UserUsage> {
    return this.transport.json({ method: "GET", path: "/v1/me/usage", query: { days: o.days }, options: o });
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
