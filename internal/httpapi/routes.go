package httpapi

import (
	"net/http"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/webhooks"
	"github.com/carryon-hub/carryon/internal/wire"
)

// AuthKind says who may call a route.
type AuthKind int

// Kinds of authentication a route needs.
const (
	// AuthPublic routes need no credentials (health, readiness, metrics, the OpenAPI document).
	AuthPublic AuthKind = iota
	// AuthUser routes need a valid API key; the key's user is the caller.
	AuthUser
	// AuthAdmin routes need the API key of an admin user.
	AuthAdmin
)

// String returns "public", "user" or "admin".
func (k AuthKind) String() string {
	switch k {
	case AuthPublic:
		return "public"
	case AuthUser:
		return "user"
	case AuthAdmin:
		return "admin"
	}
	return "unknown"
}

// Param is a query parameter a route accepts. Any other query parameter is refused with 400.
type Param struct {
	Name        string
	Type        string // "string" or "integer"
	Description string
	Required    bool
	Min, Max    int64    // bounds of an integer parameter
	Enum        []string // allowed values of a string parameter
	// Format is the OpenAPI format of a string parameter ("date-time").
	Format string
	// Fresh makes a MayLag route's read go to the primary when the parameter is given: it turns
	// a listing into a lookup a write may depend on (a session by its external id).
	Fresh bool
}

// Route is one entry of the route table: how it is matched, who may call it, what it reads and
// answers (for the OpenAPI document) and the handler maker that serves it.
type Route struct {
	// Method and Pattern form the net/http pattern "Method Pattern"; Pattern is a path with
	// wildcards such as /v1/sessions/{id}.
	Method, Pattern string
	Auth            AuthKind
	// SessionScoped routes have the id of a session in {id}.
	SessionScoped bool
	// Write routes take Idempotency-Key (request_id): a repeat answers the first answer.
	// Versioned write routes also take If-Match (expected_version): they write an existing
	// session, which has a version. A route refuses either header it does not take with 400
	// (checkControls), so a write control is never silently ignored.
	Write, Versioned bool
	Summary          string
	// Status is the status of a successful answer.
	Status int
	Query  []Param
	// Request is a value of the request body type, or nil when the route reads no body;
	// BodyOptional allows an empty body (every field is optional).
	Request      any
	BodyOptional bool
	// Response is a value of the answer body type, or nil for an answer without a body.
	Response any
	// MayLag routes are reads that tolerate staleness: with a read replica (serve --read-dsn)
	// their reads may be served by it, up to its staleness bound behind the primary, and the
	// answer then says X-Carryon-Read: replica (store.WithStaleRead). This field is the one place
	// that decides which reads may: listings and the inspector's views, whose answer no write
	// depends on. Never a read that carries a version or an entity tag (a session, a working
	// memory, a run, a long-term item), nor a run's event stream, nor anything a write reads.
	MayLag bool
	// AliasOf is set on a route kept under an older path for one release: the pattern of the
	// route it is an alias of (the same handler). The OpenAPI document marks it deprecated.
	AliasOf string
	handler func(*server) http.HandlerFunc
}

// RouteInfo describes one registered route, for tests and documentation.
type RouteInfo struct {
	Method, Pattern string
	Auth            AuthKind
	SessionScoped   bool
	// Write and Versioned are the route's: a write route takes Idempotency-Key (request_id), a
	// versioned one If-Match (expected_version) as well.
	Write, Versioned bool
	Summary          string
}

// Routes lists every route the server registers.
func Routes() []RouteInfo {
	var out []RouteInfo
	for _, rt := range routeTable() {
		out = append(out, RouteInfo{Method: rt.Method, Pattern: rt.Pattern, Auth: rt.Auth, SessionScoped: rt.SessionScoped,
			Write: rt.Write, Versioned: rt.Versioned, Summary: rt.Summary})
	}
	return out
}

// Query parameters shared by several routes: every listing pages with limit and cursor.
var (
	paramLimit  = Param{Name: "limit", Type: "integer", Min: 1, Max: carryon.MaxMessageWindow, Description: "page size (default 50)"}
	paramCursor = Param{Name: "cursor", Type: "string", Description: "next_cursor of the previous page (opaque)"}
	// paramUsageDays is how many UTC days a usage answer has, today included.
	paramUsageDays = Param{Name: "days", Type: "integer", Min: 1, Max: carryon.MaxUsageDays, Description: "how many UTC days, today included, the days list has (default 30)"}
)

// routeTable is every route of the API. It is a function, not a variable, so handlers may refer to
// it (the OpenAPI document is generated from it).
func routeTable() []Route {
	return withAliases(routes())
}

// oldPaths maps path prefixes to the older ones still served for one release: the session's
// working memory was at /memory, a word the long-term memory (/v1/memories) shares.
var oldPaths = map[string]string{"/v1/sessions/{id}/working_memory": "/v1/sessions/{id}/memory"}

// withAliases serves each route under a renamed prefix at its older path too, as an alias
// (AliasOf) of the current one.
func withAliases(rts []Route) []Route {
	out := make([]Route, 0, len(rts)+4)
	for _, rt := range rts {
		out = append(out, rt)
		for cur, old := range oldPaths {
			if rest, ok := strings.CutPrefix(rt.Pattern, cur); ok && (rest == "" || rest[0] == '/') {
				alias := rt
				alias.Pattern, alias.AliasOf = old+rest, rt.Pattern
				out = append(out, alias)
			}
		}
	}
	return out
}

// routes is every route of the API under its current path.
func routes() []Route {
	sess := func(rt Route) Route { rt.Auth, rt.SessionScoped = AuthUser, true; return rt }
	write := func(rt Route) Route { rt.Write, rt.Versioned = true, true; return rt }
	retry := func(rt Route) Route { rt.Write = true; return rt } // a write of something without a version
	return []Route{
		// Sessions.
		retry(Route{Method: "POST", Pattern: "/v1/sessions", Auth: AuthUser, Status: 201, Summary: "Create a session",
			Request: carryon.NewSession{}, BodyOptional: true, Response: carryon.Session{}, handler: (*server).handleSessionCreate}),
		{Method: "GET", Pattern: "/v1/sessions", Auth: AuthUser, Status: 200, Summary: "List the caller's sessions, newest first (by creation, so paging never skips one)",
			Query: []Param{{Name: "status", Type: "string", Enum: []string{"active", "closed", "expired"}, Description: "only sessions in this status"},
				{Name: "external_id", Type: "string", Fresh: true, Description: "only the session with this external id (a page of at most one)"},
				{Name: "q", Type: "string", Description: "search: the sessions whose title holds every word, or one of whose visible messages does (whole words, the last also as a prefix); same order, newest first; deleted messages never match, a fork matches what it inherits; at most 256 bytes and 8 words"},
				{Name: "metadata", Type: "object", Description: "metadata[key]=value: only sessions whose metadata has that key with that string value (several are AND-ed, at most 8; keys: letters, digits, _-.:)"},
				{Name: "agent", Type: "string", Description: "only sessions of this agent profile"},
				{Name: "created_after", Type: "string", Format: "date-time", Description: "only sessions created after this RFC 3339 time"},
				{Name: "created_before", Type: "string", Format: "date-time", Description: "only sessions created before this RFC 3339 time"},
				{Name: "updated_after", Type: "string", Format: "date-time", Description: "only sessions last updated after this RFC 3339 time"},
				{Name: "updated_before", Type: "string", Format: "date-time", Description: "only sessions last updated before this RFC 3339 time"},
				paramLimit, paramCursor},
			MayLag: true, Response: carryon.SessionPage{}, handler: (*server).handleSessionList},
		sess(Route{Method: "GET", Pattern: "/v1/sessions/{id}", Status: 200, Summary: "Get a session with its working memory and last messages",
			Query:    []Param{{Name: "messages", Type: "integer", Min: 0, Max: carryon.MaxMessageWindow, Description: "how many of the last messages to include (default 20, 0 for none)"}},
			Response: carryon.SessionView{}, handler: (*server).handleSessionGet}),
		sess(write(Route{Method: "PATCH", Pattern: "/v1/sessions/{id}", Status: 200, Summary: "Change title, metadata or idle TTL",
			Request: carryon.SessionUpdate{}, Response: carryon.Session{}, handler: (*server).handleSessionUpdate})),
		sess(write(Route{Method: "POST", Pattern: "/v1/sessions/{id}/close", Status: 200, Summary: "Close a session: writes stop, history stays",
			Request: carryon.WriteOptions{}, BodyOptional: true, Response: carryon.Session{}, handler: (*server).handleSessionClose})),
		sess(write(Route{Method: "POST", Pattern: "/v1/sessions/{id}/restore", Status: 200, Summary: "Reopen a closed or expired session",
			Request: carryon.WriteOptions{}, BodyOptional: true, Response: carryon.Session{}, handler: (*server).handleSessionRestore})),
		sess(write(Route{Method: "DELETE", Pattern: "/v1/sessions/{id}", Status: 204, Summary: "Delete a session and everything in it",
			Request: carryon.WriteOptions{}, BodyOptional: true, handler: (*server).handleSessionDelete})),
		sess(write(Route{Method: "POST", Pattern: "/v1/sessions/{id}/fork", Status: 201, Summary: "Fork a session (copy on write) as it is now or at an earlier version",
			Request: carryon.ForkInput{}, BodyOptional: true, Response: carryon.Session{}, handler: (*server).handleSessionFork})),
		sess(Route{Method: "GET", Pattern: "/v1/sessions/{id}/export", Status: 200, Summary: "Export a session as a bundle: JSON Lines of every row it owns, with a checksum (docs/EXPORT.md)",
			handler: (*server).handleSessionExport}),
		sess(Route{Method: "GET", Pattern: "/v1/sessions/{id}/storage", Status: 200, Summary: "What a session takes, by kind: rows and bytes of its messages, compactions, working-memory revisions, runs, events, journal, request ids, search index documents and workspace files",
			MayLag: true, Response: carryon.SessionStorage{}, handler: (*server).handleSessionStorage}),
		sess(Route{Method: "GET", Pattern: "/v1/sessions/{id}/usage", Status: 200, Summary: "What a session's runs spent, in all, per model and on each of the last days (UTC, zeros included), in tokens and USD, and the session's budget",
			Query: []Param{paramUsageDays}, Response: carryon.SessionUsage{}, handler: (*server).handleSessionUsage}),
		retry(Route{Method: "POST", Pattern: "/v1/sessions/import", Auth: AuthUser, Status: 201, Summary: "Import a session for the caller from a bundle or from OpenAI conversation items, in one transaction (docs/EXPORT.md)",
			Query: []Param{{Name: "format", Type: "string", Enum: []string{carryon.ImportCarryon, carryon.ImportOpenAI}, Description: "carryon (a bundle) or openai (conversation items); default by Content-Type"},
				{Name: "keep_ids", Type: "string", Enum: []string{"true", "false"}, Description: "keep the bundle's ids instead of making new ones (an id that exists refuses the import with 409)"},
				{Name: "parent", Type: "string", Description: "for a bundle of a fork: the caller's session it forks (default the bundle's parent id)"},
				{Name: "order", Type: "string", Enum: []string{"asc", "desc"}, Description: "for format=openai: the order of the items in their pages (default desc, OpenAI's default)"}},
			Request: importBody{}, Response: carryon.ImportResult{}, handler: (*server).handleSessionImport}),
		// Messages.
		sess(write(Route{Method: "POST", Pattern: "/v1/sessions/{id}/messages", Status: 201, Summary: "Append messages",
			Request: wire.AppendRequest{}, Response: carryon.AppendResult{}, handler: (*server).handleMessagesAppend})),
		sess(Route{Method: "GET", Pattern: "/v1/sessions/{id}/messages", Status: 200, Summary: "Page through messages, oldest first",
			Query: []Param{paramLimit, paramCursor,
				{Name: "after_seq", Type: "integer", Min: 0, Max: 1<<53 - 1, Description: "only messages after this seq (an alias of cursor)"},
				{Name: "before_seq", Type: "integer", Min: 1, Max: 1<<53 - 1, Description: "page backwards: the last messages before this seq, oldest first; next_cursor is then the next before_seq"},
				{Name: "include_deleted", Type: "string", Enum: []string{"true", "false"}, Description: "true: list the tombstones of deleted messages too, in the seq range the page covers (deleted: true, the message's role and kind, the version and created_at of the delete, no content); they do not count against limit"}},
			MayLag: true, Response: carryon.MessagePage{}, handler: (*server).handleMessagesList}),
		sess(write(Route{Method: "DELETE", Pattern: "/v1/sessions/{id}/messages/{seq}", Status: 200, Summary: "Delete one message: a tombstone hides it from reads and the model's context (forks made before keep it)",
			Request: carryon.WriteOptions{}, BodyOptional: true, Response: carryon.Session{}, handler: (*server).handleMessageDelete})),
		// Working memory.
		sess(Route{Method: "GET", Pattern: "/v1/sessions/{id}/working_memory", Status: 200, Summary: "Get the working memory",
			Response: carryon.WorkingMemoryState{}, handler: (*server).handleWorkingMemoryGet}),
		sess(write(Route{Method: "PATCH", Pattern: "/v1/sessions/{id}/working_memory", Status: 200, Summary: "Change the working memory with a JSON Merge Patch (RFC 7396)",
			Request: wire.WorkingMemoryPatchRequest{}, Response: carryon.WorkingMemoryState{}, handler: (*server).handleWorkingMemoryPatch})),
		sess(Route{Method: "GET", Pattern: "/v1/sessions/{id}/working_memory/history", Status: 200, Summary: "List working memory revisions, newest first",
			Query: []Param{paramLimit, paramCursor,
				{Name: "before", Type: "integer", Min: 1, Max: 1<<53 - 1, Description: "only revisions before this memory_version (an alias of cursor)"}},
			MayLag: true, Response: carryon.RevisionPage{}, handler: (*server).handleWorkingMemoryHistory}),
		sess(Route{Method: "GET", Pattern: "/v1/sessions/{id}/working_memory/diff", Status: 200, Summary: "Compare two working memory revisions",
			Query: []Param{
				{Name: "from", Type: "integer", Required: true, Min: 0, Max: 1<<53 - 1, Description: "the older memory_version"},
				{Name: "to", Type: "integer", Required: true, Min: 0, Max: 1<<53 - 1, Description: "the newer memory_version"}},
			MayLag: true, Response: carryon.WorkingMemoryDiff{}, handler: (*server).handleWorkingMemoryDiff}),
		// Context, runs and the short path.
		sess(Route{Method: "GET", Pattern: "/v1/sessions/{id}/context", Status: 200, Summary: "What the context builder would send the model now, with tokens per part",
			Response: carryon.ContextPreview{}, handler: (*server).handleContext}),
		sess(write(Route{Method: "POST", Pattern: "/v1/sessions/{id}/compact", Status: 201, Summary: "Compact a session: the session's model summarizes its history but the last keep_last messages, stored as a compaction the context uses from then on (history stays)",
			Request: carryon.CompactInput{}, BodyOptional: true, Response: carryon.Compaction{}, handler: (*server).handleCompact})),
		sess(Route{Method: "POST", Pattern: "/v1/sessions/{id}/extract", Status: 200, Summary: "Learn facts from the session's turns since its last extraction into the owner's long-term memory (consolidated; once per turn: a repeat learns only newer turns)",
			Response: carryon.Extraction{}, handler: (*server).handleExtract}),
		sess(Route{Method: "GET", Pattern: "/v1/sessions/{id}/compactions", Status: 200, Summary: "List a session's compactions, oldest first (a fork's include those its parent had when it was made)",
			MayLag: true, Response: carryon.CompactionPage{}, handler: (*server).handleCompactions}),
		sess(write(Route{Method: "POST", Pattern: "/v1/sessions/{id}/runs", Status: 202, Summary: "Start a run with a user message (with Accept: text/event-stream, its events as SSE)",
			Request: carryon.NewRun{}, Response: carryon.Run{}, handler: (*server).handleRunStart})),
		sess(Route{Method: "GET", Pattern: "/v1/sessions/{id}/runs", Status: 200, Summary: "List a session's runs, newest first",
			Query: []Param{paramLimit, paramCursor}, MayLag: true, Response: carryon.RunPage{}, handler: (*server).handleRunList}),
		{Method: "GET", Pattern: "/v1/runs/{id}", Auth: AuthUser, Status: 200, Summary: "Get a run",
			Response: carryon.Run{}, handler: (*server).handleRunGet},
		{Method: "GET", Pattern: "/v1/runs/{id}/events", Auth: AuthUser, Status: 200, Summary: "The run's events as Server-Sent Events, resumable with Last-Event-ID",
			Query: []Param{{Name: "after", Type: "integer", Min: 0, Max: 1<<53 - 1, Description: "only events after this seq (Last-Event-ID wins)"},
				{Name: "follow", Type: "string", Enum: []string{"true", "false"}, Description: "false: end the stream after the events stored so far instead of following the run to its end (default true)"}},
			handler: (*server).handleRunEvents},
		{Method: "GET", Pattern: "/v1/runs/{id}/actions", Auth: AuthUser, Status: 200, Summary: "The run's tool journal, in order",
			Query: []Param{paramLimit, paramCursor}, MayLag: true, Response: ActionList{}, handler: (*server).handleRunActions},
		retry(Route{Method: "POST", Pattern: "/v1/runs/{id}/cancel", Auth: AuthUser, Status: 200, Summary: "Cancel a run (it stops at its next checkpoint)",
			Request: carryon.RetryOptions{}, BodyOptional: true, Response: carryon.Run{}, handler: (*server).handleRunCancel}),
		retry(Route{Method: "POST", Pattern: "/v1/runs/{id}/approve", Auth: AuthUser, Status: 200, Summary: "Decide an action a waiting run stopped on (approve or reject a call that asks for approval; rerun, mark_done or skip one cut off by a crash); the run continues",
			Request: carryon.Approval{}, Response: carryon.Run{}, handler: (*server).handleRunApprove}),
		retry(Route{Method: "POST", Pattern: "/v1/runs/{id}/tool_outputs", Auth: AuthUser, Status: 200, Summary: "Answer every client tool call a requires_action run waits for; the run continues",
			Request: carryon.ToolOutputs{}, Response: carryon.Run{}, handler: (*server).handleRunToolOutputs}),
		write(Route{Method: "POST", Pattern: "/v1/chat", Auth: AuthUser, Status: 200, Summary: "Send a message to a session (made when no id is given), wait for the run, answer the reply",
			Request: carryon.ChatInput{}, Response: carryon.ChatResult{}, handler: (*server).handleChat}),
		// Long-term memory: the caller's own items only.
		write(Route{Method: "PUT", Pattern: "/v1/memories/{namespace}/{key}", Auth: AuthUser, Status: 200, Summary: "Remember a JSON value under a namespace and key (replaces what was there; If-Match or expected_version: only at that item version, 0 for none yet)",
			Request: carryon.LongTermPut{}, Response: carryon.LongTermItem{}, handler: (*server).handleLongTermPut}),
		{Method: "GET", Pattern: "/v1/memories/{namespace}/{key}", Auth: AuthUser, Status: 200, Summary: "Get a long-term memory item",
			Response: carryon.LongTermItem{}, handler: (*server).handleLongTermItemGet},
		retry(Route{Method: "POST", Pattern: "/v1/memories/{namespace}", Auth: AuthUser, Status: 200, Summary: "Remember a fact under a key the server chooses, or consolidate it into a near duplicate of the namespace (consolidated_into, supersedes)",
			Request: carryon.LongTermAdd{}, Response: carryon.LongTermAdded{}, handler: (*server).handleLongTermAdd}),
		{Method: "GET", Pattern: "/v1/memories/{namespace}/{key}/versions", Auth: AuthUser, Status: 200, Summary: "List the earlier values of a long-term memory item that consolidating writes replaced, newest first",
			Response: carryon.LongTermVersions{}, handler: (*server).handleLongTermVersions},
		write(Route{Method: "DELETE", Pattern: "/v1/memories/{namespace}/{key}", Auth: AuthUser, Status: 204, Summary: "Forget a long-term memory item (If-Match or expected_version: only at that item version)",
			Request: carryon.WriteOptions{}, BodyOptional: true, handler: (*server).handleLongTermDelete}),
		{Method: "GET", Pattern: "/v1/memories", Auth: AuthUser, Status: 200, Summary: "List the caller's long-term memory by namespace and key",
			Query:  []Param{{Name: "namespace", Type: "string", Description: "only this namespace and the namespaces under it (segment by segment)"}, paramLimit, paramCursor},
			MayLag: true, Response: carryon.LongTermPage{}, handler: (*server).handleLongTermList},
		{Method: "POST", Pattern: "/v1/memories/search", Auth: AuthUser, Status: 200, Summary: "Search the caller's long-term memory, most relevant first, a page at a time",
			Request: carryon.LongTermSearch{}, MayLag: true, Response: carryon.LongTermResults{}, handler: (*server).handleLongTermSearch},
		// Webhooks: the caller's own only (docs/WEBHOOKS.md).
		{Method: "POST", Pattern: "/v1/webhooks", Auth: AuthUser, Status: 201, Summary: "Subscribe a URL to run events, for the caller or one of their sessions (the answer shows the signing secret, once)",
			Request: webhooks.NewWebhook{}, Response: webhooks.Webhook{}, handler: (*server).handleWebhookCreate},
		{Method: "GET", Pattern: "/v1/webhooks", Auth: AuthUser, Status: 200, Summary: "List the caller's webhooks, oldest first (never a secret)",
			Response: webhooks.WebhookList{}, handler: (*server).handleWebhookList},
		{Method: "GET", Pattern: "/v1/webhooks/{id}", Auth: AuthUser, Status: 200, Summary: "Get a webhook (never its secret)",
			Response: webhooks.Webhook{}, handler: (*server).handleWebhookGet},
		{Method: "PATCH", Pattern: "/v1/webhooks/{id}", Auth: AuthUser, Status: 200, Summary: "Change a webhook's URL or events, or pause and resume it",
			Request: webhooks.WebhookPatch{}, Response: webhooks.Webhook{}, handler: (*server).handleWebhookUpdate},
		{Method: "DELETE", Pattern: "/v1/webhooks/{id}", Auth: AuthUser, Status: 204, Summary: "Delete a webhook and its delivery log",
			handler: (*server).handleWebhookDelete},
		{Method: "POST", Pattern: "/v1/webhooks/{id}/rotate", Auth: AuthUser, Status: 200, Summary: "Give a webhook a new signing secret (shown once); the previous one keeps signing next to it for a while",
			Request: webhooks.Rotate{}, BodyOptional: true, Response: webhooks.Webhook{}, handler: (*server).handleWebhookRotate},
		{Method: "GET", Pattern: "/v1/webhooks/{id}/deliveries", Auth: AuthUser, Status: 200, Summary: "A webhook's delivery log, newest first (status, attempts, last error, response code)",
			Query:    []Param{{Name: "limit", Type: "integer", Min: 1, Max: webhooks.MaxDeliveriesPerPage, Description: "page size (default 100)"}, paramCursor},
			Response: webhooks.DeliveryPage{}, handler: (*server).handleWebhookDeliveries},
		{Method: "POST", Pattern: "/v1/webhooks/{id}/deliveries/{did}/redeliver", Auth: AuthUser, Status: 202, Summary: "Queue a delivery again, now, with the same webhook-id",
			Response: webhooks.Delivery{}, handler: (*server).handleWebhookRedeliver},
		// Schedules: runs a session starts by itself.
		sess(retry(Route{Method: "POST", Pattern: "/v1/sessions/{id}/schedules", Status: 201, Summary: "Schedule runs on the session: a 5-field cron in an IANA time zone, every interval, or once at a time",
			Request: carryon.NewSchedule{}, Response: carryon.Schedule{}, handler: (*server).handleScheduleCreate})),
		sess(Route{Method: "GET", Pattern: "/v1/sessions/{id}/schedules", Status: 200, Summary: "List the session's schedules, newest first",
			Query: []Param{paramLimit, paramCursor}, Response: carryon.SchedulePage{}, handler: (*server).handleSessionSchedules}),
		{Method: "GET", Pattern: "/v1/schedules", Auth: AuthUser, Status: 200, Summary: "List the caller's schedules on every session, newest first",
			Query: []Param{paramLimit, paramCursor}, Response: carryon.SchedulePage{}, handler: (*server).handleScheduleList},
		{Method: "GET", Pattern: "/v1/schedules/{id}", Auth: AuthUser, Status: 200, Summary: "Get a schedule with its next fire time and last tick",
			Response: carryon.Schedule{}, handler: (*server).handleScheduleGet},
		retry(Route{Method: "PATCH", Pattern: "/v1/schedules/{id}", Auth: AuthUser, Status: 200, Summary: "Change a schedule's timing, message or policies, or pause (paused: true) and resume it",
			Request: carryon.ScheduleUpdate{}, Response: carryon.Schedule{}, handler: (*server).handleScheduleUpdate}),
		retry(Route{Method: "DELETE", Pattern: "/v1/schedules/{id}", Auth: AuthUser, Status: 204, Summary: "Delete a schedule (a run it started goes on)",
			Request: carryon.RetryOptions{}, BodyOptional: true, handler: (*server).handleScheduleDelete}),
		retry(Route{Method: "POST", Pattern: "/v1/schedules/{id}/run", Auth: AuthUser, Status: 201, Summary: "Start the schedule's run now, under its overlap policy (the ticks do not move)",
			Request: carryon.RetryOptions{}, BodyOptional: true, Response: carryon.Run{}, handler: (*server).handleScheduleRun}),
		// Agent profiles.
		{Method: "GET", Pattern: "/v1/agents", Auth: AuthUser, Status: 200, Summary: "List the agent profiles a caller may use (provider, model, tools with effect classes and approvals, digest; never a secret)",
			Response: carryon.AgentList{}, handler: (*server).handleAgents},
		// Users and keys.
		{Method: "GET", Pattern: "/v1/me", Auth: AuthUser, Status: 200, Summary: "The caller",
			Response: carryon.User{}, handler: (*server).handleMe},
		{Method: "GET", Pattern: "/v1/me/settings", Auth: AuthUser, Status: 200, Summary: "The caller's own settings (learn_facts: whether agent profiles with memory_extraction learn facts from the caller's sessions)",
			Response: carryon.UserSettings{}, handler: (*server).handleSettings},
		{Method: "PATCH", Pattern: "/v1/me/settings", Auth: AuthUser, Status: 200, Summary: "Change the caller's own settings (the fields given)",
			Request: carryon.UserSettingsPatch{}, Response: carryon.UserSettings{}, handler: (*server).handleSettingsUpdate},
		{Method: "GET", Pattern: "/v1/me/usage", Auth: AuthUser, Status: 200, Summary: "What the caller's runs spent today and this month (UTC), per model, and on each of the last days (zeros included), in tokens and USD, and the caller's budgets",
			Query: []Param{paramUsageDays}, Response: carryon.UserUsage{}, handler: (*server).handleUsage},
		{Method: "GET", Pattern: "/v1/users/{id}/usage", Auth: AuthAdmin, Status: 200, Summary: "A user's usage (by id or name): what GET /v1/me/usage answers that user",
			Query: []Param{paramUsageDays}, Response: carryon.UserUsage{}, handler: (*server).handleUserUsage},
		{Method: "GET", Pattern: "/v1/users/{id}/budget", Auth: AuthAdmin, Status: 200, Summary: "A user's budgets (by id or name): for each UTC day and each UTC month, in tokens and/or USD",
			Response: carryon.UserBudget{}, handler: (*server).handleUserBudgetGet},
		retry(Route{Method: "PUT", Pattern: "/v1/users/{id}/budget", Auth: AuthAdmin, Status: 200, Summary: "Replace a user's budgets (by id or name); a day or month left out has none. Runs stopped at a budget wait until approved",
			Request: carryon.UserBudgetInput{}, Response: carryon.UserBudget{}, handler: (*server).handleUserBudgetPut}),
		{Method: "POST", Pattern: "/v1/users", Auth: AuthAdmin, Status: 201, Summary: "Create a user and a first key (the secret is shown once)",
			Request: carryon.NewUser{}, Response: wire.CreateUserResponse{}, handler: (*server).handleUserCreate},
		{Method: "GET", Pattern: "/v1/users", Auth: AuthAdmin, Status: 200, Summary: "List users by name",
			Query: []Param{paramLimit, paramCursor}, Response: wire.UserList{}, handler: (*server).handleUserList},
		{Method: "GET", Pattern: "/v1/users/{id}", Auth: AuthAdmin, Status: 200, Summary: "Get a user by id or name",
			Response: carryon.User{}, handler: (*server).handleUserGet},
		{Method: "DELETE", Pattern: "/v1/users/{id}", Auth: AuthAdmin, Status: 200,
			Summary:  "Forget a user (by id or name) and everything of theirs: sessions, runs, workspaces, long-term memory, request ids, keys; answers the receipt. Given the id of a user whose forgetting was cut off, continues it",
			Response: carryon.ForgetReceipt{}, handler: (*server).handleUserForget},
		{Method: "POST", Pattern: "/v1/users/{id}/keys", Auth: AuthAdmin, Status: 201, Summary: "Create another key for a user (by id or name)",
			Response: wire.CreateKeyResponse{}, handler: (*server).handleKeyCreate},
		{Method: "GET", Pattern: "/v1/users/{id}/keys", Auth: AuthAdmin, Status: 200, Summary: "List a user's keys (by id or name), oldest first",
			Query: []Param{paramLimit, paramCursor}, Response: wire.KeyList{}, handler: (*server).handleKeyList},
		{Method: "GET", Pattern: "/v1/users/{id}/limits", Auth: AuthAdmin, Status: 200,
			Summary:  "A user's limits (by id or name): those an admin set, those that apply over the server's defaults, the bytes stored and the runs running",
			Response: carryon.UserLimits{}, handler: (*server).handleLimitsGet},
		{Method: "PUT", Pattern: "/v1/users/{id}/limits", Auth: AuthAdmin, Status: 200,
			Summary: "Replace a user's limits (by id or name): a field left out is the server's default, 0 no bound; a negative value is 400",
			Request: carryon.Limits{}, BodyOptional: true, Response: carryon.UserLimits{}, handler: (*server).handleLimitsPut},
		retry(Route{Method: "DELETE", Pattern: "/v1/keys/{id}", Auth: AuthAdmin, Status: 204, Summary: "Revoke a key",
			Request: carryon.RetryOptions{}, BodyOptional: true, handler: (*server).handleKeyRevoke}),
		// Operations.
		{Method: "GET", Pattern: "/healthz", Auth: AuthPublic, Status: 200, Summary: "Liveness: the process answers",
			Response: wire.Health{}, handler: (*server).handleHealth},
		{Method: "GET", Pattern: "/readyz", Auth: AuthPublic, Status: 200, Summary: "Readiness: the database answers",
			Response: wire.Health{}, handler: (*server).handleReady},
		{Method: "GET", Pattern: "/metrics", Auth: AuthPublic, Status: 200, Summary: "Prometheus metrics (text exposition format)",
			handler: (*server).handleMetrics},
		{Method: "GET", Pattern: "/openapi.json", Auth: AuthPublic, Status: 200, Summary: "This API as an OpenAPI 3.1 document",
			handler: (*server).handleOpenAPI},
	}
}
