package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/carryon-hub/carryon/internal/model"
)

func TestCollect(t *testing.T) {
	t.Parallel()
	call := model.ToolCall{ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)}
	p := &fakeProvider{attempts: [][]step{{
		{chunk: model.Chunk{Delta: "Hel"}},
		{chunk: model.Chunk{Delta: "lo"}},
		{chunk: model.Chunk{ToolCalls: []model.ToolCall{call}, Usage: &model.Usage{InputTokens: 7, OutputTokens: 3}, FinishReason: model.FinishToolCalls}},
	}}}
	resp, err := model.Collect(p.Stream(context.Background(), model.Request{}))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Hello" || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID != "call_1" ||
		resp.Usage != (model.Usage{InputTokens: 7, OutputTokens: 3}) || resp.FinishReason != model.FinishToolCalls {
		t.Errorf("resp = %+v", resp)
	}
}

func TestCollectError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	p := &fakeProvider{attempts: [][]step{{{chunk: model.Chunk{Delta: "par"}}, {err: boom}}}}
	resp, err := model.Collect(p.Stream(context.Background(), model.Request{}))
	if err != boom || resp.Text != "par" {
		t.Errorf("resp %+v, err %v; want the partial text and the error", resp, err)
	}
}

func TestNormalizeArguments(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                `{}`,
		"  ":              `{}`,
		`{"a":1}`:         `{"a":1}`,
		` {"a":1} `:       `{"a":1}`,
		`{"a":`:           `"{\"a\":"`,
		`not json at all`: `"not json at all"`,
	} {
		got := model.NormalizeArguments(in)
		if string(got) != want || !json.Valid(got) {
			t.Errorf("NormalizeArguments(%q) = %s, want %s", in, got, want)
		}
	}
}
