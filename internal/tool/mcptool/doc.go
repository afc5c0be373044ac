// Package mcptool offers the tools of MCP (Model Context Protocol) servers as carryon tools, with
// the official Go SDK (github.com/modelcontextprotocol/go-sdk) as the client. A Server is one MCP
// server and a tool.Source; each of its tools is a *Tool, a tool.Tool the engine journals, checks
// and calls like a built-in one.
//
// It must not journal, retry a call or decide recovery: the engine does, by each tool's effect
// class. It holds no secrets of its own: the caller resolves header values from the environment.
//
// # Servers
//
// A Config names the server and says how to reach it, with exactly one of:
//
//   - Command: a stdio server, a program carryon starts and talks to over stdin and stdout. It is
//     started lazily, on the first Tools or Call, in a process group of its own, with a small
//     environment: only HOME, LOGNAME, PATH, SHELL, TERM, USER, LANG, TMPDIR and TZ (and their
//     Windows counterparts, see InheritedEnv) are inherited from carryon, so carryon's API keys and
//     database URL never reach it; Env adds to them. Its stderr is logged at debug level and its
//     last kilobyte is quoted when it fails to start or dies.
//   - URL: a streamable HTTP server, with Headers (already resolved values, e.g. an
//     Authorization token read from the variable a profile's headers_env names) sent on every
//     request.
//   - Transport: a function that returns a new mcp.Transport, for servers embedded in process and
//     for tests.
//
// When a server dies or its connection breaks, the calls in flight fail (see Calls) and the next
// use reconnects, starting the command again. The first reconnect after a working session is
// immediate; further failures in a row wait 0.5 s, 1 s, 2 s … up to 30 s. A call that arrives
// while the server is waiting out that backoff waits for it if its own timeout allows, and fails
// at once otherwise; a call that the server answers resets the backoff. Nothing is restarted in
// the background: a dead server that nobody uses stays down. Close ends the session (stdin is
// closed, then SIGTERM, then SIGKILL of the process group, each after 2 s) and must be called at
// shutdown.
//
// A server that is alive but stuck is restarted too (stdio and Transport servers; see
// health.go). Many stdio servers handle one request at a time, so one call that never ends
// would make every later call, from every run, time out. After a call goes unanswered (its
// timeout ran out, or its caller gave up) the server is pinged; when it does not answer within
// a quarter of CallTimeout (between 250 ms and 5 s), or when 3 calls in a row time out with no
// answer between, its process group is killed and the next use starts a new one. Its calls in
// flight fail at once with "MCP server "x" stopped answering and was restarted during the call
// (why); the call may or may not have taken effect". A call that arrives while the ping is out
// waits for its verdict within its own timeout, so no call waits behind a stuck one for longer
// than its own timeout.
//
// # Tool lists
//
// Tools lists the server's tools, following nextCursor to the last page, and caches the list
// until the server sends notifications/tools/list_changed or a new session starts (after a
// restart). When a refresh fails but an earlier list exists, the earlier list is returned (a
// server that is down for a moment does not take its tools away from a run); with no list at all
// the error is EUNAVAILABLE.
//
// # Names
//
// Each tool is offered to the model as <server>__<tool>, sanitised to ^[a-zA-Z0-9_-]{1,64}$:
// every other character becomes "_". A name over 64 characters is cut to 55 and gets "_" and
// the first 8 hex digits of the SHA-256 of the MCP tool name. When a sanitised name meets another
// tool's name (read.file and read_file both become read_file), the one that needed no change keeps
// it and the changed ones get the same kind of suffix, so the names stay distinct whatever order
// the server lists them in. Server names (1 to 32 letters and digits in words joined by single _
// or -) cannot produce "__" or a trailing "_", so two servers' tool names never meet. Tool.MCPName
// gives the name on the server.
//
// # Schemas
//
// A tool's inputSchema is its carryon Schema. MCP requires an object schema; a schema without
// "type" (or null) is taken as "type": "object", and ["object", "null"] as "object". A tool whose
// schema tool.NewRegistry would still refuse (not an object, an unresolvable $ref, an unknown
// type) is left out with a warning, so that one bad tool cannot make the agent's registry fail.
// Draft-07 and 2020-12 schemas are both accepted; the registry validates the model's arguments
// against the schema before every call, so the server never sees arguments that break it.
//
// # Effect classes
//
// Every MCP tool is unsafe by default: if carryon dies during the call, the run stops in
// waiting_approval for a user to decide. With Config.TrustAnnotations, the server's annotations
// decide instead: readOnlyHint makes a tool read (run again after a crash), idempotentHint with
// destructiveHint explicitly false makes it idempotent (run again with the same idempotency
// key); anything else stays unsafe. Without trust the hints are ignored, as the MCP specification
// says of annotations from untrusted servers. An agent profile's override for one tool is
// Tool.WithEffect (read, idempotent or unsafe; an MCP tool cannot reconcile).
//
// # Calls
//
// A call sends the arguments (already validated) and, in the request's _meta, the journal's
// idempotency key under "carryon/idempotency_key" (MetaIdempotencyKey): run_id/step/index, the
// same for every attempt, so a server can dedupe a call carryon runs again. Each call, including
// (re)starting the server, is bounded by Config.CallTimeout (default 60 s); starting and
// initialising the server alone by ConnectTimeout (default 60 s).
//
// A server has at most Config.MaxConcurrentCalls calls in flight (default
// DefaultMaxConcurrentCalls, 4), from all the runs that use it. A call beyond them waits for one
// to end, within its own timeout and its caller's context; when they end first it fails as not
// made, and the server never sees it. A call frees its slot when it returns, timed out or not.
//
// The result's text content is joined with newlines; other content is summarised one per line:
// "[image image/png, 1234 bytes]", "[audio audio/wav, 10 bytes]", "[resource link <uri> "name",
// mime: description]", an embedded text resource as "[resource <uri>, mime]" and its text, a
// binary one as "[resource <uri>, mime, N bytes]". Structured content follows as JSON, unless a
// text block already holds the same JSON (as servers are asked to send it). The text is cut at
// MaxResultBytes (read_file's limit) on a rune boundary with a note.
//
// One message of a stdio server is at most MaxMessageBytes (16 MiB, the go-sdk's frame limit, past
// which the SDK would drop the connection and fail every call in flight). carryon reads a longer
// message in pieces without holding it whole: an answer to a call becomes a result with the start
// of its text, up to MaxResultBytes, and the note "[truncated: the MCP server's answer was N
// bytes, more than the 16777216 bytes carryon reads in one message; this is the first M bytes of
// its text]"; other content and structured content are left out, and an error answer keeps only
// its size. Any other oversize message (a request, a notification) is dropped with a warning.
// The connection and the other calls carry on.
//
// Failures are errors whose text is written for the model, which the engine journals as a
// failed action and shows to the model as "error: <text>", so the run goes on and the model can
// react:
//
//   - isError: "<tool>: " and the result's text.
//   - a JSON-RPC error answer (an unknown tool, bad parameters): "<tool>: MCP server "x" refused
//     the call: <message>".
//   - no answer within CallTimeout: the SDK sends the server notifications/cancelled with the
//     request's id (and the reason "context deadline exceeded") and the error says the call "may
//     or may not have taken effect"; the server is pinged, and restarted if it does not answer
//     (see Servers).
//   - the server is restarted for not answering during the call: the same warning, and why.
//   - the server dies or the connection breaks during the call: the same warning, and the next
//     use reconnects.
//   - the server cannot be started or reached: "the call was not made" and why.
//
// When the caller's context ends (the run lost its lease, carryon shuts down), its cause is
// returned instead, so the engine keeps the action started for recovery to settle.
package mcptool
