package runs

import "github.com/carryon-hub/carryon"

// appended is the data of a message.appended event: the append, and, for the message of a
// model's answer, what the step's model calls used (the answer's call and any summary or
// compaction call before it), so that a run's record tells each call's input tokens.
type appended struct {
	*carryon.AppendResult
	Usage *callUsage `json:"usage,omitempty"`
}

// callUsage is a model call's tokens: input (cached of them read from the provider's prompt
// cache) and output.
type callUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	CachedTokens int `json:"cached_tokens"`
}

// withUsage is res as a message.appended event's data, with u when a model call used any.
func withUsage(res *carryon.AppendResult, u carryon.Usage, cached int) appended {
	if u.InputTokens <= 0 && u.OutputTokens <= 0 {
		return appended{AppendResult: res}
	}
	return appended{AppendResult: res, Usage: &callUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedTokens: max(cached, 0)}}
}
