package carryonadk_test

import (
	"testing"

	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/sessiontestsuite"

	"github.com/carryon-hub/carryon/contrib/adk"
)

// TestADKServiceSuite runs ADK's own conformance suite for session services against the adapter,
// in-process and over HTTP, with client-chosen session ids (carryon's external ids).
func TestADKServiceSuite(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			sessiontestsuite.RunServiceTests(t, sessiontestsuite.SuiteOptions{SupportsUserProvidedSessionID: true},
				func(t *testing.T) session.Service {
					return m.service(newHub(t, ""), false, carryonadk.Options{})
				})
		})
	}
}
