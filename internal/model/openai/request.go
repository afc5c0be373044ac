package openai

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/carryon-hub/carryon/internal/model"
)

// params translates a model.Request into the SDK's streaming chat completion parameters.
func (p *Provider) params(req model.Request) (openai.ChatCompletionNewParams, error) {
	name := req.Model
	if name == "" {
		name = p.model
	}
	if name == "" {
		return openai.ChatCompletionNewParams{}, errors.New("no model named in the request or the provider's config")
	}
	msgs, err := messages(req)
	if err != nil {
		return openai.ChatCompletionNewParams{}, err
	}
	params := openai.ChatCompletionNewParams{
		Model:         name,
		Messages:      msgs,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		if p.official {
			params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	for _, t := range req.Tools {
		tool, err := functionTool(t)
		if err != nil {
			return openai.ChatCompletionNewParams{}, err
		}
		params.Tools = append(params.Tools, tool)
	}
	return params, nil
}

// messages translates the system prompt and the conversation. Message.Name is not sent: on this
// wire it is a participant name with a strict pattern, not a tool's name.
func messages(req model.Request) ([]openai.ChatCompletionMessageParamUnion, error) {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case model.RoleSystem:
			out = append(out, openai.SystemMessage(m.Content))
		case model.RoleUser:
			out = append(out, openai.UserMessage(m.Content))
		case model.RoleAssistant:
			out = append(out, assistantMessage(m))
		case model.RoleTool:
			if m.ToolCallID == "" {
				return nil, fmt.Errorf("message %d: a tool message needs a tool call id", i)
			}
			out = append(out, openai.ToolMessage(m.Content, m.ToolCallID))
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// assistantMessage translates an assistant message with its tool calls.
func assistantMessage(m model.Message) openai.ChatCompletionMessageParamUnion {
	var a openai.ChatCompletionAssistantMessageParam
	if m.Content != "" || len(m.ToolCalls) == 0 {
		a.Content.OfString = openai.String(m.Content)
	}
	for _, c := range m.ToolCalls {
		args := string(model.NormalizeArguments(string(c.Arguments)))
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: c.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
					Name:      c.Name,
					Arguments: args,
				},
			},
		})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// functionTool translates a tool spec into a function tool.
func functionTool(t model.ToolSpec) (openai.ChatCompletionToolUnionParam, error) {
	fn := shared.FunctionDefinitionParam{Name: t.Name}
	if t.Description != "" {
		fn.Description = openai.String(t.Description)
	}
	if len(t.Parameters) > 0 {
		var schema shared.FunctionParameters
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return openai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %q: parameters are not a JSON object: %w", t.Name, err)
		}
		fn.Parameters = schema
	}
	return openai.ChatCompletionFunctionTool(fn), nil
}
