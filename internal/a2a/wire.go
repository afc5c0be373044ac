package a2a

import "encoding/json"

// The wire types, as A2A 1.0's JSON (protojson: camelCase names, enum values such as
// TASK_STATE_COMPLETED, a part's kind given by which of text, raw, url or data it has) and, with
// the dialect legacy, as A2A 0.3's (kind discriminators, states such as completed, role agent).

// part is one part of a message or an artifact. Input parts may be 1.0's or 0.3's (kind, file).
type part struct {
	Kind      string          `json:"kind,omitempty"`
	Text      *string         `json:"text,omitempty"`
	Raw       string          `json:"raw,omitempty"`
	URL       string          `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	File      json.RawMessage `json:"file,omitempty"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
}

// message is an A2A message.
type message struct {
	Kind             string          `json:"kind,omitempty"`
	MessageID        string          `json:"messageId"`
	ContextID        string          `json:"contextId,omitempty"`
	TaskID           string          `json:"taskId,omitempty"`
	Role             string          `json:"role"`
	Parts            []part          `json:"parts"`
	Metadata         json.RawMessage `json:"metadata,omitempty"`
	Extensions       []string        `json:"extensions,omitempty"`
	ReferenceTaskIDs []string        `json:"referenceTaskIds,omitempty"`
}

// taskStatus is a task's state, with the agent's message about it.
type taskStatus struct {
	State     string   `json:"state"`
	Message   *message `json:"message,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
}

// artifact is an output of a task: carryon's is the run's reply.
type artifact struct {
	ArtifactID string `json:"artifactId"`
	Name       string `json:"name,omitempty"`
	Parts      []part `json:"parts"`
}

// task is an A2A task: a run.
type task struct {
	Kind      string         `json:"kind,omitempty"`
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    taskStatus     `json:"status"`
	Artifacts []artifact     `json:"artifacts,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// statusUpdate is a stream event: the task's state changed. Final is 0.3's.
type statusUpdate struct {
	Kind      string     `json:"kind,omitempty"`
	TaskID    string     `json:"taskId"`
	ContextID string     `json:"contextId"`
	Status    taskStatus `json:"status"`
	Final     *bool      `json:"final,omitempty"`
}

// artifactUpdate is a stream event: a chunk of the reply (Append) or the whole of it.
type artifactUpdate struct {
	Kind      string   `json:"kind,omitempty"`
	TaskID    string   `json:"taskId"`
	ContextID string   `json:"contextId"`
	Artifact  artifact `json:"artifact"`
	Append    bool     `json:"append,omitempty"`
	LastChunk bool     `json:"lastChunk,omitempty"`
}

// dialect is the protocol version an answer is in: the one whose method name was called.
type dialect struct{ legacy bool }

// Task states as the run states map to them.
const (
	stateSubmitted     = "TASK_STATE_SUBMITTED"
	stateWorking       = "TASK_STATE_WORKING"
	stateInputRequired = "TASK_STATE_INPUT_REQUIRED"
	stateCompleted     = "TASK_STATE_COMPLETED"
	stateFailed        = "TASK_STATE_FAILED"
	stateCanceled      = "TASK_STATE_CANCELED"
)

var legacyStates = map[string]string{
	stateSubmitted: "submitted", stateWorking: "working", stateInputRequired: "input-required",
	stateCompleted: "completed", stateFailed: "failed", stateCanceled: "canceled",
}

// state is a state in the dialect.
func (d dialect) state(s string) string {
	if d.legacy {
		return legacyStates[s]
	}
	return s
}

// kind is the 0.3 discriminator k, or nothing in 1.0.
func (d dialect) kind(k string) string {
	if d.legacy {
		return k
	}
	return ""
}

// textPart is a text part.
func (d dialect) textPart(s string) part { return part{Kind: d.kind("text"), Text: &s} }

// dataPart is a data part holding v.
func (d dialect) dataPart(v any) part {
	b, _ := json.Marshal(v)
	return part{Kind: d.kind("data"), Data: b}
}

// agentMessage is a message of the agent.
func (d dialect) agentMessage(id, taskID, contextID string, parts ...part) *message {
	role := "ROLE_AGENT"
	if d.legacy {
		role = "agent"
	}
	return &message{Kind: d.kind("message"), MessageID: id, TaskID: taskID, ContextID: contextID, Role: role, Parts: parts}
}

// wrapSend is the result of a send: 1.0 wraps the task ({"task": …}), 0.3 answers it as is.
func (d dialect) wrapSend(t task) any {
	if d.legacy {
		t.Kind = "task"
		return t
	}
	return map[string]any{"task": t}
}

// wrapEvent is one stream event's result: 1.0 names its kind by its member (task, statusUpdate,
// artifactUpdate), 0.3 by its kind field.
func (d dialect) wrapEvent(v any) any {
	if !d.legacy {
		switch e := v.(type) {
		case task:
			return map[string]any{"task": e}
		case statusUpdate:
			return map[string]any{"statusUpdate": e}
		case artifactUpdate:
			return map[string]any{"artifactUpdate": e}
		}
		return v
	}
	switch e := v.(type) {
	case task:
		e.Kind = "task"
		return e
	case statusUpdate:
		e.Kind = "status-update"
		return e
	case artifactUpdate:
		e.Kind = "artifact-update"
		return e
	}
	return v
}
