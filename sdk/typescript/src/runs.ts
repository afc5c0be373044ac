// The routes of the agent's runs: start, events, client tools and approvals, and follow, which
// answers a run's waits with the caller's handlers.
import { streamEvents, type EventStreamOptions, type RunEvent } from "./events.js";
import { Paged, type ListOptions, type Page } from "./paging.js";
import type { CallOptions, Transport, WriteOptions } from "./transport.js";
import type * as T from "./types.js";

const enc = encodeURIComponent;

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

