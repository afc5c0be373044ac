package main

import (
	"net/http"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/openapicheck"
)

// answerChecks attributes the check of each answer against the OpenAPI document to the test that
// started the server process it came from (by the server's host:port).
var answerChecks = struct {
	sync.Mutex
	byHost map[string]*testing.T
}{byHost: map[string]*testing.T{}}

// checkAnswers makes http.DefaultTransport (which the CLI's client and the tests' requests use)
// check every answer against the OpenAPI document.
func checkAnswers() error {
	ck, err := openapicheck.New(httpapi.OpenAPI())
	if err != nil {
		return err
	}
	http.DefaultTransport = ck.Transport(http.DefaultTransport, func(r *http.Request, err error) {
		answerChecks.Lock()
		defer answerChecks.Unlock()
		if t := answerChecks.byHost[r.URL.Host]; t != nil {
			t.Errorf("%s %s: %v", r.Method, r.URL, err)
		}
	})
	return nil
}

// watchAnswers makes a mismatch in the answers of the server at host fail t, until t ends.
func watchAnswers(t *testing.T, host string) {
	answerChecks.Lock()
	answerChecks.byHost[host] = t
	answerChecks.Unlock()
	t.Cleanup(func() {
		answerChecks.Lock()
		defer answerChecks.Unlock()
		if answerChecks.byHost[host] == t {
			delete(answerChecks.byHost, host)
		}
	})
}
