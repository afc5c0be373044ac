// @carryon/sdk: a TypeScript client for carryon, the durable session hub and agent runtime.
export { Carryon } from "./client.js";
export type { UpdateFn } from "./client.js";
export { Sessions } from "./sessions.js";
export { Users } from "./users.js";
export { Runs } from "./runs.js";
export type { ToolCallHandler, ApprovalDecision, FollowOptions } from "./runs.js";
export { Memories } from "./memories.js";
export type { UpdateOptions, SearchOptions, SearchMode, AddOptions } from "./memories.js";
export { CarryonError, ConnectionError, isCarryonError } from "./errors.js";
export type { Problem, ProblemCode } from "./errors.js";
export type { RunEvent, RunEventType, EventStreamOptions } from "./events.js";
export { mergePatch } from "./mergepatch.js";
export { Paged } from "./paging.js";
export type { Page, ListOptions } from "./paging.js";
export { Transport } from "./transport.js";
export type { ClientOptions, CallOptions, WriteOptions, Call } from "./transport.js";
export type * from "./types.js";
export type { paths, components, operations } from "./openapi.js";
