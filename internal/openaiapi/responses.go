package openaiapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/carryon-hub/carryon"
)

// The Responses API (/v1/responses…) over runs: a response is a segment of a run (translate.go),
// function tools are the run's client-side tools, and the next request's function_call_output
// items are the outputs the run waits for.

// createResponseRequest is the body of POST /v1/responses: every field the specification
// defines (as the pinned SDKs send them), and no other. The first ones carryon reads; the
// others are accepted, those in echoed answered as sent, the rest ignored (docs/COMPAT.md).
type createResponseRequest struct {
	Model              string            `json:"model"`
	Input              json.RawMessage   `json:"input"`
	Instructions       json.RawMessage   `json:"instructions"`
	Conversation       json.RawMessage   `json:"conversation"`
	PreviousResponseID string            `json:"previous_response_id"`
	Metadata           json.RawMessage   `json:"metadata"`
	Stream             bool              `json:"stream"`
	Background         bool              `json:"background"`
	Store              *bool             `json:"store"`
	Tools              []json.RawMessage `json:"tools"`
	specOnly
}

// specOnly are the fields of a create request that carryon does not act on: echoed ones are
// answered as sent (parseCreate reads them by name), the others accepted and ignored.
type specOnly struct {
	ToolChoice           json.RawMessage `json:"tool_choice"`
	Temperature          json.RawMessage `json:"temperature"`
	TopP                 json.RawMessage `json:"top_p"`
	ParallelToolCalls    json.RawMessage `json:"parallel_tool_calls"`
	MaxOutputTokens      json.RawMessage `json:"max_output_tokens"`
	Text                 json.RawMessage `json:"text"`
	Truncation           json.RawMessage `json:"truncation"`
	Reasoning            json.RawMessage `json:"reasoning"`
	User                 json.RawMessage `json:"user"`
	ServiceTier          json.RawMessage `json:"service_tier"`
	TopLogprobs          json.RawMessage `json:"top_logprobs"`
	MaxToolCalls         json.RawMessage `json:"max_tool_calls"`
	PromptCacheKey       json.RawMessage `json:"prompt_cache_key"`
	SafetyIdentifier     json.RawMessage `json:"safety_identifier"`
	Include              json.RawMessage `json:"include"`
	StreamOptions        json.RawMessage `json:"stream_options"`
	Prompt               json.RawMessage `json:"prompt"`
	PromptCacheRetention json.RawMessage `json:"prompt_cache_retention"`
	PromptCacheOptions   json.RawMessage `json:"prompt_cache_options"`
	ContextManagement    json.RawMessage `json:"context_management"`
	Moderation           json.RawMessage `json:"moderation"`
	AccessPrograms       json.RawMessage `json:"access_programs"`
	Image                json.RawMessage `json:"image"`
}

// functionTool is a tool of a request: only function tools are served.
type functionTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// parseCreate reads and checks a create request; nothing is written before it passed.
func parseCreate(r *http.Request) (createResponseRequest, responseRecord, []carryon.ClientTool, error) {
	var in createResponseRequest
	if err := decodeBody(r, &in, false); err != nil {
		return in, responseRecord{}, nil, err
	}
	var all map[string]json.RawMessage // the same body, by name, for the echoed fields
	raw, _ := json.Marshal(in)
	_ = json.Unmarshal(raw, &all)
	rec := responseRecord{Model: in.Model, PreviousResponseID: in.PreviousResponseID, Store: in.Store, Background: in.Background, Tools: in.Tools}
	if t := bytes.TrimSpace(in.Instructions); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		rec.Instructions = in.Instructions
	}
	meta, err := metadataOf(in.Metadata)
	if err != nil {
		return in, rec, nil, err
	}
	rec.Metadata = meta
	for _, k := range echoed {
		if v, ok := all[k]; ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			if rec.Echo == nil {
				rec.Echo = map[string]json.RawMessage{}
			}
			rec.Echo[k] = v
		}
	}
	conv, err := conversationID(in.Conversation)
	if err != nil {
		return in, rec, nil, err
	}
	if conv != "" && in.PreviousResponseID != "" {
		return in, rec, nil, invalidParam("previous_response_id", "previous_response_id and conversation cannot both be given: a response continues one or the other")
	}
	rec.Conversation = conv
	if rec.CompactThreshold, err = compactThresholdOf(in.ContextManagement); err != nil {
		return in, rec, nil, err
	}
	var tools []carryon.ClientTool
	for i, t := range in.Tools {
		var ft functionTool
		if json.Unmarshal(t, &ft) != nil || ft.Type != "function" {
			return in, rec, nil, invalidParam("tools", "tools[%d]: carryon serves function tools (run by the client) only, not %q", i, ft.Type)
		}
		p := ft.Parameters
		if bytes.Equal(bytes.TrimSpace(p), []byte("null")) {
			p = nil
		}
		tools = append(tools, carryon.ClientTool{Name: ft.Name, Description: ft.Description, Parameters: p})
	}
	return in, rec, tools, nil
}

// compactThresholdOf reads context_management: at most one entry, of type compaction, whose
// compact_threshold (a whole number of tokens, from 1 to carryon.MaxCompactThreshold) is the run's
// automatic compaction threshold. 0 when there is none, or the entry gives no threshold (the
// profile's applies).
func compactThresholdOf(raw json.RawMessage) (int, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return 0, nil
	}
	var entries []struct {
		Type             string   `json:"type"`
		CompactThreshold *float64 `json:"compact_threshold"`
	}
	if err := json.Unmarshal(t, &entries); err != nil {
		return 0, invalidParam("context_management", "context_management must be a list of {\"type\": \"compaction\", \"compact_threshold\": N}")
	}
	if len(entries) > 1 {
		return 0, invalidParam("context_management", "context_management has %d entries; carryon takes one, of type compaction", len(entries))
	}
	threshold := 0
	for i, e := range entries {
		if e.Type != "compaction" {
			return 0, invalidParam(fmt.Sprintf("context_management[%d].type", i), "the context management entry type must be compaction, not %q", e.Type)
		}
		if e.CompactThreshold == nil {
			continue
		}
		if n := *e.CompactThreshold; n != float64(int64(n)) || n < 1 || n > carryon.MaxCompactThreshold {
			return 0, invalidParam(fmt.Sprintf("context_management[%d].compact_threshold", i), "compact_threshold must be a whole number of tokens from 1 to %d, not %v", carryon.MaxCompactThreshold, n)
		}
		threshold = int(*e.CompactThreshold)
	}
	return threshold, nil
}

// conversationID reads the conversation field: an id, or an object with one.
func conversationID(raw json.RawMessage) (string, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return "", nil
	}
	var id string
	if json.Unmarshal(t, &id) == nil && id != "" {
		return id, nil
	}
	var obj struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(t, &obj) == nil && obj.ID != "" {
		return obj.ID, nil
	}
	return "", invalidParam("conversation", "conversation must be a conversation id or {\"id\": …}")
}

// inputOf splits a request's input: the messages to store (the last one the run's user message)
// and the outputs of function calls that a waiting response asked for (a function_call_output
// whose call is not in the same input); and, for each function_call item of the input whose id
// is one of carryon's (fc_…, as a response named it), the run that made the call, by call id.
func inputOf(raw json.RawMessage) ([]carryon.NewMessage, []carryon.ToolOutput, map[string]string, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil, nil, invalidParam("input", "input is required: a string or a list of items")
	}
	var text string
	if json.Unmarshal(t, &text) == nil {
		if text == "" {
			return nil, nil, nil, invalidParam("input", "input is empty")
		}
		return []carryon.NewMessage{{Role: carryon.RoleUser, Content: text}}, nil, nil, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(t, &raws); err != nil || len(raws) == 0 {
		return nil, nil, nil, invalidParam("input", "input must be a string or a non-empty list of items")
	}
	if len(raws) > 1000 {
		return nil, nil, nil, invalidParam("input", "input has %d items; at most 1000 are taken", len(raws))
	}
	var msgs []carryon.NewMessage
	calls := map[string]bool{}
	calledBy := map[string]string{}
	for i, r := range raws {
		m, err := messageOf(r, fmt.Sprintf("input[%d]", i))
		if err != nil {
			return nil, nil, nil, err
		}
		var tc []carryon.ToolCall
		if json.Unmarshal(m.ToolCalls, &tc) == nil {
			var item struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(r, &item)
			for _, c := range tc {
				calls[c.ID] = true
				if run := runOfCallItem(item.ID); run != "" {
					calledBy[c.ID] = run
				}
			}
		}
		msgs = append(msgs, m)
	}
	var keep []carryon.NewMessage
	var outs []carryon.ToolOutput
	for _, m := range msgs {
		if m.Role == carryon.RoleTool && !calls[m.ToolCallID] {
			outs = append(outs, carryon.ToolOutput{CallID: m.ToolCallID, Output: m.Content})
			continue
		}
		keep = append(keep, m)
	}
	if len(outs) > 0 && len(keep) > 0 {
		return nil, nil, nil, invalidParam("input", "function_call_output items that answer a response come alone; send the other items in the next request")
	}
	return keep, outs, calledBy, nil
}

// createResponse starts a run (or continues one waiting for tool outputs) and answers the
// response: streamed, at once (background), or once it ended.
func (h *Handler) createResponse(w http.ResponseWriter, r *http.Request) {
	in, rec, tools, err := parseCreate(r)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	conv, input, err := h.compactedInput(r, in.Input)
	switch {
	case err != nil:
	case conv != "" && (rec.PreviousResponseID != "" || rec.Conversation != "" && rec.Conversation != conv):
		err = invalidParam("input", "a compaction item continues its own conversation: send it without previous_response_id or another conversation")
	case conv != "":
		rec.Conversation, in.Input = conv, input
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	msgs, outs, calledBy, err := inputOf(in.Input)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	var runID string
	segment := 0
	if len(outs) > 0 {
		runID, segment, err = h.submitOutputs(r, rec, outs, key)
	} else {
		runID, err = h.start(r, in, rec, tools, msgs, key)
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if len(outs) == 0 && rec.PreviousResponseID == "" && rec.Conversation == "" {
		h.settleAnswered(r, msgs, calledBy, key)
	}
	switch {
	case in.Stream:
		h.stream(w, r, runID, segment, -1)
	case in.Background:
		h.answerAt(w, r, runID, segment, untilCreated)
	default:
		h.answerAt(w, r, runID, segment, untilSettled)
	}
}

// start starts the run of a request: on the conversation, on the session of the previous
// response (forked at that response when a later run followed it), or on a new session.
func (h *Handler) start(r *http.Request, in createResponseRequest, rec responseRecord, tools []carryon.ClientTool, msgs []carryon.NewMessage, key string) (string, error) {
	last := msgs[len(msgs)-1]
	message, before := last.Content, msgs[:len(msgs)-1]
	switch {
	case last.Role == carryon.RoleTool:
		// The input sends a function call back with its output (inputOf kept it: its call is
		// in the same input): the run continues the history after the output, as the model's
		// next turn, with no user message of its own.
		message, before = "", msgs
	case last.Role != carryon.RoleUser || strings.TrimSpace(last.Content) == "":
		return "", invalidParam("input", "input must end with a user message with text, or with function_call_output items answering the function_call items before them: carryon runs its agent on a user's message or continues after a tool's output")
	}
	ctx := r.Context()
	agent := ""
	if h.agents != nil && in.Model != "" {
		if _, err := h.agents.Agent(in.Model); err == nil {
			agent = in.Model
		}
	}
	rec.InputCount = len(msgs)
	meta, _ := json.Marshal(map[string]any{"openai_response": rec})
	run := carryon.NewRun{Message: message, Input: before, Tools: tools, Agent: agent, Metadata: meta, CompactThreshold: rec.CompactThreshold,
		Multitask: carryon.MultitaskReject, WriteOptions: carryon.WriteOptions{RequestID: key}}
	sub := func(suffix string) string {
		if key == "" {
			return ""
		}
		return key + "#" + suffix
	}
	sessionID, made := rec.Conversation, false
	switch {
	case rec.PreviousResponseID != "":
		id, err := h.continueAt(r, rec.PreviousResponseID, sub("fork"))
		if err != nil {
			return "", err
		}
		sessionID = id
	case sessionID == "":
		s, err := h.sessions.Create(ctx, carryon.NewSession{Title: clip(titleOf(msgs)), TitleDerived: true, Agent: agent, WriteOptions: carryon.WriteOptions{RequestID: sub("session")}})
		if err != nil {
			return "", err
		}
		sessionID, made = s.ID, true
	}
	started, err := h.runs.Start(ctx, sessionID, run)
	if err != nil {
		if made && carryon.ErrorCode(err) == carryon.EINVALID {
			_ = h.sessions.Delete(ctx, sessionID, carryon.WriteOptions{}) // a refused request leaves nothing behind
		}
		if carryon.ErrorCode(err) == carryon.EINVALID {
			param := "input"
			if strings.HasPrefix(carryon.ErrorMessage(err), "tools") {
				param = "tools"
			}
			return "", &paramError{param: param, err: asError(err)}
		}
		return "", err
	}
	return started.ID, nil
}

// settleAnswered ends the run that waits for the function calls a stateless request answers
// itself (its input ends with carryon's function_call items and their outputs, as the OpenAI
// Agents SDK in session mode sends them): the new response continues after the outputs on a
// session of its own, so nothing will ever answer the first run, which would otherwise wait
// until the tool-output timeout. It is cancelled when it waits for exactly calls the input
// answers; anything else (another run, a run that no longer waits) is left alone. A failure is
// not the request's: the new response stands, and the first run ends at its timeout.
func (h *Handler) settleAnswered(r *http.Request, msgs []carryon.NewMessage, calledBy map[string]string, key string) {
	answered := map[string]bool{}
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == carryon.RoleTool; i-- {
		answered[msgs[i].ToolCallID] = true
	}
	runID := ""
	for id := range answered {
		if run := calledBy[id]; run == "" || runID != "" && run != runID {
			return
		} else {
			runID = run
		}
	}
	if runID == "" {
		return
	}
	ctx := r.Context()
	run, err := h.runs.GetRun(ctx, runID)
	if err != nil || run.Status != carryon.RunRequiresAction || run.RequiredAction == nil {
		return
	}
	for _, c := range run.RequiredAction.ToolCalls {
		if !answered[c.CallID] {
			return
		}
	}
	settle := ""
	if key != "" {
		settle = key + "#settle"
	}
	_, _ = h.runs.Cancel(ctx, runID, carryon.RetryOptions{RequestID: settle})
}

// runOfCallItem is the run whose response named a function_call item id (fc_<run>_<n>), or "".
func runOfCallItem(id string) string {
	rest, ok := strings.CutPrefix(id, "fc_")
	if i := strings.LastIndexByte(rest, '_'); ok && i > 0 {
		return "run_" + rest[:i]
	}
	return ""
}

// continueAt returns the session a response that continues prevID runs on: the previous
// response's session, or a fork of it at the end of that response when a later run came. A
// repeat of the request (its Idempotency-Key used) runs where the first one did, the session its
// run started on: the lookups would now find the first request's own run after prevID and fork
// again. A response id of no response of the caller (a segment its run never had) is ENOTFOUND.
func (h *Handler) continueAt(r *http.Request, prevID, forkKey string) (string, error) {
	ctx := r.Context()
	if session, used, err := h.repeat(r); err != nil {
		return "", err
	} else if used && session != "" {
		return session, nil
	}
	prev, t, err := h.segment(r, prevID)
	if err != nil {
		return "", err
	}
	page, err := h.runs.ListRuns(ctx, prev.SessionID, carryon.RunFilter{Limit: 1})
	if err != nil {
		return "", err
	}
	if len(page.Items) == 0 || page.Items[0].ID == prev.ID {
		return prev.SessionID, nil
	}
	// The fork is at the end of the previous response: its segment's last message.
	fork, err := h.sessions.Fork(ctx, prev.SessionID, carryon.ForkInput{AtVersion: t.lastVer, WriteOptions: carryon.WriteOptions{RequestID: forkKey}})
	if err != nil {
		return "", err
	}
	return fork.ID, nil
}

// submitOutputs delivers function call outputs to the response that waits for them: the
// previous response's run, or the conversation's run that waits. It returns the run and the
// segment the outputs start.
//
// A repeat (its Idempotency-Key used) goes to the run without the checks of a first request, which
// the first request's outputs made false (the run no longer waits): SubmitToolOutputs answers it
// as it did the first time.
func (h *Handler) submitOutputs(r *http.Request, rec responseRecord, outs []carryon.ToolOutput, key string) (string, int, error) {
	ctx := r.Context()
	_, used, err := h.repeat(r)
	if err != nil {
		return "", 0, err
	}
	var runID string
	switch {
	case rec.PreviousResponseID != "" && used:
		id, _, ok := parseResponseID(rec.PreviousResponseID)
		if !ok {
			return "", 0, notFoundResponse(rec.PreviousResponseID)
		}
		runID = id
	case rec.PreviousResponseID != "":
		prev, _, err := h.segment(r, rec.PreviousResponseID)
		if err != nil {
			return "", 0, err
		}
		runID = prev.ID
	case rec.Conversation != "":
		page, err := h.runs.ListRuns(ctx, rec.Conversation, carryon.RunFilter{Limit: 1})
		if err != nil {
			return "", 0, err
		}
		if len(page.Items) == 0 || !used && page.Items[0].Status != carryon.RunRequiresAction {
			return "", 0, invalidParam("input", "no response of conversation %s waits for function call outputs", rec.Conversation)
		}
		runID = page.Items[0].ID
	default:
		return "", 0, invalidParam("input", "function_call_output items answer a response that waits for them: send previous_response_id or conversation with them")
	}
	run, err := h.runs.SubmitToolOutputs(ctx, runID, carryon.ToolOutputs{Outputs: outs, RetryOptions: carryon.RetryOptions{RequestID: key}})
	if err != nil {
		if carryon.ErrorCode(err) == carryon.EINVALID {
			return "", 0, &paramError{param: "input", err: asError(err)}
		}
		return "", 0, responseErr(err, runID)
	}
	// The segment is the one the outputs' run.tool_outputs event starts.
	events, err := h.runs.Events(ctx, run.ID, 0, false)
	if err != nil {
		return "", 0, err
	}
	defer events.Close()
	segment := 0
	for {
		e, ok, err := events.Next()
		if err != nil {
			return "", 0, err
		}
		if !ok {
			return "", 0, carryon.Errorf(carryon.EINTERNAL, "run %s has no event for the outputs it took", run.ID)
		}
		if e.Type != carryon.EventToolOutputs {
			continue
		}
		segment++
		var d struct {
			CallIDs []string `json:"call_ids"`
		}
		if json.Unmarshal(e.Data, &d) == nil && containsString(d.CallIDs, outs[0].CallID) {
			return run.ID, segment, nil
		}
	}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// asError is err as a *carryon.Error.
func asError(err error) *carryon.Error {
	if e, ok := carryon.AsError(err); ok {
		return e
	}
	return carryon.Errorf(carryon.EINTERNAL, "%v", err)
}

// notFoundResponse is the error of a response id that names no response of the caller.
func notFoundResponse(id string) error {
	return carryon.Errorf(carryon.ENOTFOUND, "no response %s", id)
}

// responseErr names the response in a run's not-found error.
func responseErr(err error, id string) error {
	if carryon.ErrorCode(err) == carryon.ENOTFOUND {
		return notFoundResponse(id)
	}
	return err
}

// titleOf is the text a new session of msgs is titled after: its last user message's.
func titleOf(msgs []carryon.NewMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == carryon.RoleUser && strings.TrimSpace(msgs[i].Content) != "" {
			return msgs[i].Content
		}
	}
	return ""
}

func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}
