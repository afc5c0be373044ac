// Package carryonadk keeps the sessions of Google's Agent Development Kit for Go
// (google.golang.org/adk/v2) in carryon: Service implements ADK's session.Service and
// memory.Service over carryon's session and long-term memory services, either in-process (a
// hub.Hub, NewInProcess) or over HTTP (carryon's Go client, NewHTTP). docs/ADK.md says how ADK's
// sessions, state and events map onto carryon's.
//
// An adapter acts for one carryon user (the key of its client, or the user given to
// NewInProcess): the application's account. ADK's app names and user ids partition that user's
// sessions (each session's external id is made of the three ids), so that one ADK user never
// sees another's session and another carryon user never sees any of them.
package carryonadk
