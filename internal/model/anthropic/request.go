package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/carryon-hub/carryon/internal/model"
)

// params translates a model.Request into the SDK's parameters, plus request options for the
// fields the SDK's parameter type does not carry (temperature).
func (p *Provider) params(req model.Request) (anthropic.MessageNewParams, []option.RequestOption, error) {
	name := req.Model
	if name == "" {
		name = p.model
	}
	if name == "" {
		return anthropic.MessageNewParams{}, nil, errors.New("no model named in the request or the provider's config")
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.maxTokens
	}
	msgs, system, err := messages(req)
	if err != nil {
		return anthropic.MessageNewParams{}, nil, err
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(name),
		MaxTokens: int64(maxTokens),
		Messages:  msgs,
	}
	if system != "" {
		params.System = []anthropic.TextBlockParam{{Text: system}}
	}
	for _, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return anthropic.MessageNewParams{}, nil, err
		}
		params.Tools = append(params.Tools, tool)
	}
	var opts []option.RequestOption
	if req.Temperature != nil {
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	return params, opts, nil
}

// messages translates the conversation. System messages join the system prompt (the API keeps
// it apart); assistant tool calls become tool_use blocks; tool messages become tool_result
// blocks of a user message. Consecutive messages of the same API role are merged into one, so
// the results of parallel tool calls travel together, as the API requires.
func messages(req model.Request) ([]anthropic.MessageParam, string, error) {
	system := []string{}
	if req.System != "" {
		system = append(system, req.System)
	}
	var out []anthropic.MessageParam
	add := func(assistant bool, blocks ...anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 {
			if last := out[n-1]; assistant && last.OfAssistant != nil {
				last.OfAssistant.Content = append(last.OfAssistant.Content, blocks...)
				return
			} else if !assistant && last.OfUser != nil {
				last.OfUser.Content = append(last.OfUser.Content, blocks...)
				return
			}
		}
		if assistant {
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		} else {
			out = append(out, anthropic.NewUserMessage(blocks...))
		}
	}
	for i, m := range req.Messages {
		switch m.Role {
		case model.RoleSystem:
			if m.Content != "" {
				system = append(system, m.Content)
			}
		case model.RoleUser:
			if m.Content != "" {
				add(false, anthropic.NewTextBlock(m.Content))
			}
		case model.RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, model.NormalizeArguments(string(c.Arguments)), c.Name))
			}
			add(true, blocks...)
		case model.RoleTool:
			if m.ToolCallID == "" {
				return nil, "", fmt.Errorf("message %d: a tool message needs a tool call id", i)
			}
			add(false, toolResult(m))
		default:
			return nil, "", fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, strings.Join(system, "\n\n"), nil
}

// toolResult translates a tool message. The API refuses empty text blocks, so an empty result is
// a tool_result without content.
func toolResult(m model.Message) anthropic.ContentBlockParamUnion {
	if m.Content == "" {
		return anthropic.ContentBlockParamUnion{OfToolResult: &anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}}
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &anthropic.ToolResultBlockParam{
		ToolUseID: m.ToolCallID,
		Content:   []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Content}}},
	}}
}

// toolParam translates a tool spec; the JSON Schema's properties and required list go to their
// fields, every other keyword rides along unchanged.
func toolParam(t model.ToolSpec) (anthropic.ToolUnionParam, error) {
	var schema anthropic.ToolInputSchemaParam
	if len(t.Parameters) > 0 {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(t.Parameters, &fields); err != nil {
			return anthropic.ToolUnionParam{}, fmt.Errorf("tool %q: parameters are not a JSON object: %w", t.Name, err)
		}
		for k, v := range fields {
			var err error
			switch k {
			case "type":
			case "properties":
				schema.Properties = v
			case "required":
				err = json.Unmarshal(v, &schema.Required)
			default:
				if schema.ExtraFields == nil {
					schema.ExtraFields = map[string]any{}
				}
				schema.ExtraFields[k] = v
			}
			if err != nil {
				return anthropic.ToolUnionParam{}, fmt.Errorf("tool %q: parameters.%s: %w", t.Name, k, err)
			}
		}
	}
	tool := anthropic.ToolParam{Name: t.Name, InputSchema: schema}
	if t.Description != "" {
		tool.Description = anthropic.String(t.Description)
	}
	return anthropic.ToolUnionParam{OfTool: &tool}, nil
}
