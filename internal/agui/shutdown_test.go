package agui_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agui"
)

// A server shutting down (Config.StreamsDone closed) ends an open stream with RUN_ERROR
// unavailable, which tells the client to send the same input again; the run goes on.
func TestShutdownEndsStreamWithRunError(t *testing.T) {
	eachStore(t, func(t *testing.T, e *env) {
		b, _ := json.Marshal(input("thread-hang", "run-h1", user("u1", "hang on")))
		req, _ := http.NewRequest("POST", e.url+agui.Path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+e.aliceKey)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var types []string
		var last map[string]any
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			if err := json.Unmarshal([]byte(data), &last); err != nil {
				t.Fatal(err)
			}
			types = append(types, last["type"].(string))
			if last["type"] == "STATE_SNAPSHOT" {
				close(e.streamsDone) // the stream is open: the server shuts down
			}
		}
		if last == nil || last["type"] != "RUN_ERROR" || last["code"] != carryon.EUNAVAILABLE || !strings.Contains(last["message"].(string), "same input again") {
			t.Fatalf("events %v, last %v", types, last)
		}
		page, _ := e.sessions.List(e.alice, carryon.SessionFilter{ExternalID: "thread-hang"})
		runs, err := e.runs.ListRuns(e.alice, page.Items[0].ID, carryon.RunFilter{})
		if err != nil || len(runs.Items) != 1 || runs.Items[0].Status.Terminal() {
			t.Fatalf("the run after the stream ended: %+v, %v", runs, err)
		}
		if _, err := e.runs.Cancel(e.alice, runs.Items[0].ID, carryon.RetryOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}
