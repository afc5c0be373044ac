package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// pacedModel is an OpenAI-compatible model server that answers every request with the same ten
// words, one chunk every 150 ms (a model that takes its time, so that carryon stores the deltas
// as several events). Its first answer stops after three words and hangs until carryon goes.
func pacedModel(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		tick := time.NewTicker(150 * time.Millisecond)
		defer tick.Stop()
		for i, word := range pacedWords {
			if n == 1 && i == 3 {
				<-r.Context().Done() // the server was killed mid-answer
				return
			}
			select {
			case <-tick.C:
			case <-r.Context().Done():
				return
			}
			s.Data(modeltest.OpenAIChunk(map[string]any{"content": word}, nil))
		}
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
		s.Done()
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

var pacedWords = strings.SplitAfter("one two three four five six seven eight nine ten", " ")

// TestResponseStreamAcrossKill: a response streamed with the official Go client; the server is
// killed (SIGKILL) in the middle of the model's answer and started again; the client resumes
// with starting_after and gets every event once: the sequence numbers go on without a gap or
// a repeat, and the deltas of both connections joined are the reply the session stored.
func TestResponseStreamAcrossKill(t *testing.T) {
	t.Parallel()
	m, calls := pacedModel(t)
	env := []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}
	args := []string{"--provider", "openai", "--model", "gpt-test", "--lease-ttl", "2s"}
	data := t.TempDir()
	srv := startServerEnv(t, data, env, args...)
	key := localKey(t, data)
	client := func(url string) *openai.Client {
		c := openai.NewClient(option.WithBaseURL(url+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0),
			option.WithHTTPClient(&http.Client{Transport: &http.Transport{}}))
		return &c
	}
	stream := client(srv.url).Responses.NewStreaming(t.Context(), responses.ResponseNewParams{Model: "gpt-test", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("count to ten")}})
	var got []responses.ResponseStreamEventUnion
	id := ""
	for stream.Next() {
		ev := stream.Current()
		got = append(got, ev)
		if ev.Type == "response.created" {
			id = ev.Response.ID
		}
		if ev.Type == "response.output_text.delta" {
			break // text is streaming: kill the server now
		}
	}
	if id == "" || got[len(got)-1].Type != "response.output_text.delta" {
		t.Fatalf("the stream before the kill: %v (%v)", eventTypesOf(got), stream.Err())
	}
	srv.kill()
	stream.Close()
	srv = startServerEnv(t, data, env, args...)
	last := got[len(got)-1].SequenceNumber
	rest := client(srv.url).Responses.GetStreaming(t.Context(), id, responses.ResponseGetParams{StartingAfter: openai.Int(last)})
	for rest.Next() {
		got = append(got, rest.Current())
	}
	if err := rest.Err(); err != nil {
		t.Fatalf("the resumed stream: %v", err)
	}
	var text strings.Builder
	for i, ev := range got {
		if ev.SequenceNumber != int64(i) {
			t.Fatalf("event %d has sequence number %d: %s", i, ev.SequenceNumber, eventTypesOf(got))
		}
		if ev.Type == "response.output_text.delta" {
			text.WriteString(ev.Delta)
		}
	}
	final := got[len(got)-1]
	want := strings.Join(pacedWords, "")
	if final.Type != "response.completed" || final.Response.OutputText() != want || text.String() != want {
		t.Fatalf("after the restart: %s, reply %q, deltas %q; want %q", final.Type, final.Response.OutputText(), text.String(), want)
	}
	if calls.Load() < 2 {
		t.Fatalf("the model was called %d times; the answer cut by the kill was not asked again", calls.Load())
	}
	conv := final.Response.Conversation.ID
	msgs := must(t, srv.url, key, "GET", "/v1/sessions/"+conv+"/messages", nil, 200).json(t)["items"].([]any)
	if stored := msgs[len(msgs)-1].(map[string]any)["content"]; stored != want || len(msgs) != 2 {
		t.Fatalf("the session holds %d messages, the last %q; want the reply once", len(msgs), stored)
	}
}

func eventTypesOf(events []responses.ResponseStreamEventUnion) string {
	var s []string
	for _, ev := range events {
		s = append(s, ev.Type)
	}
	return strings.Join(s, " ")
}

// TestResponseStreamOnTwoInstances: over PostgreSQL, a response streamed from one instance
// streams again from another, after any event, with the same events byte for byte.
func TestResponseStreamOnTwoInstances(t *testing.T) {
	t.Parallel()
	m := historyModel(t)
	c := startCluster(t, 2, []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}, []string{"--provider", "openai", "--model", "gpt-test"}, []string{"--provider", "openai", "--model", "gpt-test"})
	client := func(url string) *openai.Client {
		cl := openai.NewClient(option.WithBaseURL(url+"/v1/"), option.WithAPIKey(c.key), option.WithMaxRetries(0),
			option.WithHTTPClient(&http.Client{Transport: &http.Transport{}}))
		return &cl
	}
	a, b := client(c.srvs[0].url), client(c.srvs[1].url)
	s := a.Responses.NewStreaming(t.Context(), responses.ResponseNewParams{Model: "gpt-test", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hello")}})
	var first []responses.ResponseStreamEventUnion
	for s.Next() {
		first = append(first, s.Current())
	}
	if s.Err() != nil || len(first) < 4 || first[len(first)-1].Type != "response.completed" {
		t.Fatalf("the stream on A: %s (%v)", eventTypesOf(first), s.Err())
	}
	id := first[0].Response.ID
	for _, after := range []int64{-1, 1, int64(len(first) - 2)} {
		params := responses.ResponseGetParams{}
		if after >= 0 {
			params.StartingAfter = openai.Int(after)
		}
		rest := b.Responses.GetStreaming(t.Context(), id, params)
		i := after + 1
		for rest.Next() {
			if got := rest.Current().RawJSON(); i >= int64(len(first)) || got != first[i].RawJSON() {
				t.Fatalf("B after %d: event %d = %s", after, i, got)
			}
			i++
		}
		if rest.Err() != nil || i != int64(len(first)) {
			t.Fatalf("B after %d: %d events (%v), want %d", after, i-after-1, rest.Err(), int64(len(first))-after-1)
		}
	}
	got, err := b.Responses.Get(t.Context(), id, responses.ResponseGetParams{})
	if err != nil || got.OutputText() != "You said: hello (1 user messages)" {
		t.Fatalf("the response on B = %v, %v", got, err)
	}
}
