package store

import "context"

// RunsChannel is the channel a run's changes are announced on; the payload is the run id. A
// driver with a Notifier sends it from the transaction that stores a run event (so it is
// delivered when, and only if, the event commits); the run manager sends it for changes without
// an event (a stop request).
const RunsChannel = "carryon_runs"

// Resubscribed is the payload a Notifier's Listen hands its fn when it listens again after a lost
// connection (it is no payload anyone sends: those are non-empty run ids).
const Resubscribed = ""

// Notifier is implemented by drivers whose database can wake other processes (PostgreSQL's
// LISTEN/NOTIFY). Without one, processes see each other's changes by polling.
type Notifier interface {
	// Notify sends payload to every listener of channel, in any process.
	Notify(ctx context.Context, channel, payload string) error
	// Listen calls fn for every payload sent to channel until ctx is done, reconnecting after
	// connection failures. Payloads sent while it was not connected are lost: once it listens
	// again after a failure it calls fn(Resubscribed), and the caller catches up from the store.
	// It returns ctx's error.
	Listen(ctx context.Context, channel string, fn func(payload string)) error
}

// AsNotifier returns the Notifier of st (looking through wrappers such as Instrument), if any.
func AsNotifier(st Store) (Notifier, bool) {
	for {
		if n, ok := st.(Notifier); ok {
			return n, true
		}
		u, ok := st.(interface{ Unwrap() Store })
		if !ok {
			return nil, false
		}
		st = u.Unwrap()
	}
}
