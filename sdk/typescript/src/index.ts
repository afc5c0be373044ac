// @carryon/sdk: a TypeScript client for carryon, the durable session hub and agent runtime.
export { Carryon, Sessions, Runs, Memories } from "./client.js";
export type { ListOptions, UpdateFn, UpdateOptions, ToolCallHandler, ApprovalDecision, FollowOptions } from "./client.js";
export { CarryonError, ConnectionError, isCarryonError } from "./errors.js";
export type { Problem, ProblemCode } from "./errors.js";
export type { RunEvent, RunEventType, EventStreamOptions } from "./events.js";
export { mergePatch } from "./mergepatch.js";
export { Paged } from "./paging.js";
export type { Page } from "./paging.js";
export { Transport } from "./transport.js";
export type { ClientOptions, CallOptions, WriteOptions, Call } from "./transport.js";
export type * from "./types.js";
export type { paths, components, operations } from "./openapi.js";
