// The session routes: sessions, their messages and their working memory.
import { Paged, type ListOptions, type Page } from "./paging.js";
import type { CallOptions, Transport, WriteOptions } from "./transport.js";
import type * as T from "./types.js";

const enc = encodeURIComponent;

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

  /** update changes a session's title, metadata, idle TTL or budget (`{}` removes it). */
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
    return this.t.json({ method: "GET", path: `/v1/sessions/${enc(id)}/working_memory`, options: o });
  }

  /** patchMemory applies a JSON merge patch (RFC 7396) to a session's working memory. */
  patchMemory(id: string, patch: Record<string, unknown>, o: WriteOptions = {}): Promise<T.WorkingMemoryState> {
    return this.t.json({ method: "PATCH", path: `/v1/sessions/${enc(id)}/working_memory`, body: { patch }, write: true, options: o });
  }

  /** memoryHistory is the revisions of a session's working memory, newest first. */
  memoryHistory(id: string, o: ListOptions = {}): Paged<T.MemoryRevision> {
    return new Paged((cursor) => this.t.json<Page<T.MemoryRevision>>({ method: "GET", path: `/v1/sessions/${enc(id)}/working_memory/history`, query: { limit: o.limit, cursor }, options: o }));
  }

  /** memoryDiff compares two revisions of the working memory by memory_version (0 is the empty document). */
  memoryDiff(id: string, from: number, to: number, o: CallOptions = {}): Promise<T.MemoryDiff> {
    return this.t.json({ method: "GET", path: `/v1/sessions/${enc(id)}/working_memory/diff`, query: { from, to }, options: o });
  }

  /** usage is what the session's runs spent, in all, per model and on each of the last `days` UTC days (default 30), with its budget. */
  usage(id: string, o: CallOptions & { days?: number } = {}): Promise<T.SessionUsage> {
    return this.t.json({ method: "GET", path: `/v1/sessions/${enc(id)}/usage`, query: { days: o.days }, options: o });
  }

  /** context is what the context builder would send the model now. */
  context(id: string, o: CallOptions = {}): Promise<T.ContextPreview> {
    return this.t.json({ method: "GET", path: `/v1/sessions/${enc(id)}/context`, options: o });
  }
}

