// Package a2atool offers remote agents that speak A2A (Agent2Agent, JSON-RPC binding) as carryon
// tools: an Agent is one remote agent and a tool.Source of one tool, NAME__send_message, which
// sends the agent a message (A2A 1.0's SendMessage, or 0.3's message/send when the agent's card
// offers only 0.3) and returns the reply's text.
//
// It must not journal, retry a call or decide recovery: the engine does, by the tool's effect
// class (unsafe unless the agents file says otherwise). It holds no secrets of its own: the
// caller resolves header values from the environment.
//
// # The card
//
// The agent card is read from Config.URL when it names a .json file, else from
// URL/.well-known/agent-card.json. It is read lazily: when a run first lists the tools (for
// the tool's description: the card's name, description and skills) or first calls it, and
// kept once read. A card that cannot be read leaves a plain description and makes every call a
// tool error saying why, until it can be read (tried again at most every RetryCard); Check
// reads it at once (`carryon agents check`). The endpoint is the card's JSON-RPC interface
// (protocolBinding JSONRPC, version 1.0 preferred), resolved against the card's URL.
//
// # A call
//
// The message's messageId is the call's idempotency key (run/step/index, the same for every
// attempt), so an agent that deduplicates by it (carryon does) applies a repeated call once. The
// send blocks until the task settles; a task still submitted or working when the send answers is
// followed with GetTask. A completed task's reply is the text of its artifacts (else of its
// status message); a failed, rejected or canceled task, a JSON-RPC error, an HTTP error or an
// unreachable agent is a tool error the model sees. A task that needs input (input-required,
// auth-required) is canceled, since the tool has no way to answer it, and is a tool error too,
// with what the agent asked. A call past CallTimeout is a tool error saying the agent may or may
// not have done the work (its task, when known, is asked to cancel).
//
// # The conversation
//
// The reply's contextId is the remote conversation. It is kept in carryon's journal: the call's
// FingerprintAfter is "a2a-context:" and the contextId, and the next call of the tool in the same
// carryon session reads it back (tool.Call.Journal) and sends it, so the remote agent continues
// the conversation, across runs and restarts. FingerprintBefore is the contextId the call
// continued ("" for a new conversation).
package a2atool
