// Names for the schemas of carryon's OpenAPI document (generated into openapi.ts).
import type { components } from "./openapi.js";

type S = components["schemas"];
/** A session as listings and writes answer it. */
export type Session = S["Session"];
/** A session with its working memory and its last messages (GET /v1/sessions/{id}). */
export type SessionView = S["SessionView"];
/** The body of a session's creation. */
export type NewSession = S["NewSession"];
/** The fields PATCH /v1/sessions/{id} changes. */
export type SessionUpdate = S["SessionUpdate"];
/** A stored message. */
export type Message = S["Message"];
/** A message to append. */
export type NewMessage = S["NewMessage"];
/** The answer of an append. */
export type AppendResult = S["AppendResult"];
/** A session's working memory with the session's version. */
export type WorkingMemoryState = S["WorkingMemoryState"];
/** A revision of a session's working memory. */
export type MemoryRevision = S["MemoryRevision"];
/** The changes between two revisions of a working memory. */
export type MemoryDiff = S["MemoryDiff"];
/** A run of the agent. */
export type Run = S["Run"];
/** The body of a new run. */
export type NewRun = S["NewRun"];
/** A tool the client runs itself. */
export type ClientTool = S["ClientTool"];
/** A call of a client tool that waits for its output. */
export type RequiredToolCall = S["RequiredToolCall"];
/** A journaled tool call. */
export type Action = S["Action"];
/** The body of POST /v1/chat. */
export type ChatInput = S["ChatInput"];
/** The answer of POST /v1/chat. */
export type ChatResult = S["ChatResult"];
/** A long-term memory item. */
export type MemoryItem = S["MemoryItem"];
/** The answer of a long-term memory add: the item, and what it was consolidated into. */
export type MemoryAdded = S["LongTermAdded"];
/** An earlier value of a long-term memory item, kept when a consolidating add replaced it. */
export type MemoryVersion = S["LongTermVersion"];
/** A page of a long-term memory search: its items, and the mode they were ranked in. */
export type MemoryResults = S["MemoryResults"];
/** The caller (GET /v1/me). */
export type User = S["User"];
/** An agent profile of the server. */
export type Agent = S["Agent"];
/** What the context builder would send the model now. */
export type ContextPreview = S["ContextPreview"];
/** A budget: a limit of tokens and/or USD, and what a run does at it (pause or fail). */
export type Budget = S["Budget"];
/** A user's budgets: one for each UTC day, one for each UTC month. */
export type UserBudget = S["UserBudget"];
/** What was spent on model calls in one UTC day. */
export type DaySpend = S["DaySpend"];
/** A user's spend today, this month and per day, with the user's budgets (GET /v1/me/usage). */
export type UserUsage = S["UserUsage"];
/** A session's spend in all, per model and per day, with its budget (GET /v1/sessions/{id}/usage). */
export type SessionUsage = S["SessionUsage"];
