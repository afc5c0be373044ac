package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/chromedp/chromedp"
)

// TestInspectorSignInPage: signed out, the page shows neither the navigation nor Sign out, and a
// server without the local key logs nothing in the console (the harness fails on any console
// error, a 404 for /ui/local-key included); signed in, the navigation shows.
func TestInspectorSignInPage(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	p := newBrowserPage(t, srv.url)
	p.do("open the sign-in page", chromedp.Navigate(srv.url+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`input[name=key]`)))
	// The offer is asked for before anything else is drawn: once it is answered, nothing more comes.
	p.until("the local-key offer answered", `performance.getEntriesByName(new URL('local-key', location.href).href).length === 1`)
	if got := p.eval(`[getComputedStyle(document.getElementById('nav')).display, String(document.getElementById('signout').checkVisibility()), String(!!document.evaluate('//button[normalize-space()="Sign in as the local user of this machine"]', document, null, 9).singleNodeValue)].join(' ')`); got != "none false false" {
		t.Fatalf("signed out, the navigation's display, Sign out's visibility and the local-key button are %q, want none false false", got)
	}
	p.check("sign-in")
	p.signIn(key)
	if got := p.eval(`[getComputedStyle(document.getElementById('nav')).display, String(document.getElementById('signout').checkVisibility())].join(' ')`); got != "flex true" {
		t.Fatalf("signed in, the navigation's display and Sign out's visibility are %q", got)
	}
	p.click("Sign out")
	p.until("signed out", `!!document.querySelector('input[name=key]') && !document.getElementById('signout').checkVisibility()`)
}

// newStepsModel is an OpenAI-compatible model that says a few words at each of three steps:
// "Bumping." with a working-memory update, "Peeking." with another, then "Done: bumped and
// peeked.".
func newStepsModel(t *testing.T) *httptest.Server {
	m := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
		}
		json.Unmarshal(body, &req)
		tools := 0
		for _, m := range req.Messages {
			if m.Role == "tool" {
				tools++
			}
		}
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": ""}, nil))
		if tools >= 2 {
			s.Data(modeltest.OpenAIChunk(map[string]any{"content": "Done: bumped and peeked."}, nil))
			s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
			s.Done()
			return
		}
		words, patch := "Bumping.", `{"patch":{"goal":"bump"}}`
		if tools == 1 {
			words, patch = "Peeking.", `{"patch":{"next_action":"peek"}}`
		}
		s.Data(modeltest.OpenAIChunk(map[string]any{"content": words}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "id": "call_" + words[:4], "type": "function",
			"function": map[string]any{"name": "update_working_memory", "arguments": patch},
		}}}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "tool_calls"))
		s.Done()
	}))
	t.Cleanup(m.Close)
	return m
}

// TestInspectorLiveSteps: the live text of a run keeps each step's words apart (a paragraph per
// step), rather than "Bumping.Peeking.Done: …".
func TestInspectorLiveSteps(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	m := newStepsModel(t)
	data := t.TempDir()
	srv := startServerEnv(t, data, []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}, "--provider", "openai", "--model", "gpt-test")
	key := localKey(t, data)
	sid := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "steps"}, 201).json(t)["id"].(string)
	p := newBrowserPage(t, srv.url)
	p.signIn(key)
	p.do("open the session", chromedp.Navigate(srv.url+"/ui/#/s/"+sid), chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)))
	p.do("send", chromedp.SendKeys(chromedp.CSS(`textarea[name=message]`), "bump and peek"), chromedp.Click(`//button[normalize-space()="Send"]`))
	p.until("the run to finish", `document.querySelector('#run-status')?.textContent === 'succeeded'`)
	p.until("the three steps", `document.querySelectorAll('#reply p').length === 3`)
	if got := p.eval(`[...document.querySelectorAll('#reply p')].map((e) => e.textContent).join('|')`); got != "Bumping.|Peeking.|Done: bumped and peeked." {
		t.Fatalf("the live text's steps are %q", got)
	}
	if got := p.eval(`document.querySelector('#reply').innerText`); strings.Contains(got, "Bumping.Peeking.") {
		t.Fatalf("the live text reads %q", got)
	}
	p.check("live-steps")
}
