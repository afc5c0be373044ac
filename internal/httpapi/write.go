package httpapi

import (
	"context"
	"net/http"

	"github.com/carryon-hub/carryon"
)

// writeRoute is one write route: what it reads, which write controls it takes, the service call
// it makes and how its result is answered. Its handler is the one pipeline every write goes
// through, in this order:
//
//  1. read the body (decode[In] under body, or read);
//  2. merge the write controls of the headers into the body's (controls);
//  3. install a write receipt in the context and make the service call (call);
//  4. mark a replayed answer with Idempotent-Replayed;
//  5. tag the result with the session version it is at (ETag), say where it can be read again
//     (Location) and keep a secret out of caches (Cache-Control: no-store);
//  6. answer: no body with 204, 200 instead of 201 when the create found what it names there
//     already (WriteReceipt.Existing), the event stream when the route streams and the client asks
//     for one, the result as JSON otherwise.
//
// An error of steps 1 to 3 answers its problem and nothing else. A route states only what
// differs (its types, its call, its status); the contract of a write cannot differ by route.
type writeRoute[In, Out any] struct {
	// body says what the route accepts as a request body.
	body bodyOptions
	// read, when set, reads the request instead of decode (a route whose body has two forms, or
	// a route that reads no body).
	read func(*server, *http.Request) (In, error)
	// controls merges the write controls of the headers into those of the body: sessionWrite or
	// retryWrite. Nil for a write that takes none (its answer holds a secret shown once, so it
	// cannot be replayed; checkControls refuses the headers).
	controls func(*server, *http.Request, *In) error
	// call makes the service call; ctx holds the receipt the service fills in.
	call func(ctx context.Context, r *http.Request, in In) (Out, error)
	// status is the status of a successful answer; a 204 answer has no body.
	status int
	// version, when set, is the version the result is at (a session's or an item's): the
	// answer's ETag.
	version func(Out) int64
	// location, when set, is where the result can be read: the answer's Location.
	location func(*http.Request, Out) string
	// noStore marks a result that holds a secret shown once: Cache-Control: no-store.
	noStore bool
	// stream, when set, answers instead of JSON when the client asks for Server-Sent Events.
	stream func(http.ResponseWriter, *http.Request, Out)
}

// handler returns the route's handler: the write pipeline.
func (wr writeRoute[In, Out]) handler(s *server) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in, err := wr.readRequest(s, r)
		if err == nil && wr.controls != nil {
			err = wr.controls(s, r, &in)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		ctx, rec := receipt(r)
		out, err := wr.call(ctx, r, in)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		markReplay(w, rec)
		status := wr.status
		if rec.Existing && status == http.StatusCreated {
			status = http.StatusOK // the create found what it names there already
		}
		if wr.version != nil {
			setETag(w, wr.version(out))
		}
		if wr.location != nil {
			w.Header().Set("Location", wr.location(r, out))
		}
		if wr.noStore {
			w.Header().Set("Cache-Control", "no-store")
		}
		switch {
		case wr.status == http.StatusNoContent:
			w.WriteHeader(http.StatusNoContent)
		case wr.stream != nil && wantsStream(r):
			wr.stream(w, r, out)
		default:
			s.writeJSON(w, r, status, out)
		}
	}
}

func (wr writeRoute[In, Out]) readRequest(s *server, r *http.Request) (In, error) {
	if wr.read != nil {
		return wr.read(s, r)
	}
	return decode[In](s, r, wr.body)
}

// sessionWrite takes the controls of a write to a session: the body's WriteOptions (at opts)
// merged with If-Match and Idempotency-Key (writeOptions). existing says whether the write is to
// a session that exists already, which the server may require a version for; a create or a fork
// writes a new one.
func sessionWrite[In any](opts func(*In) *carryon.WriteOptions, existing bool) func(*server, *http.Request, *In) error {
	return func(s *server, r *http.Request, in *In) error {
		o := opts(in)
		merged, err := s.writeOptions(r, *o, existing)
		*o = merged
		return err
	}
}

// itemWrite takes the controls of a write to a versioned thing that is not a session (a long-term
// memory item): as sessionWrite, except that --require-version, which is about sessions, does not
// apply.
func itemWrite[In any](opts func(*In) *carryon.WriteOptions) func(*server, *http.Request, *In) error {
	return sessionWrite(opts, false)
}

// retryWrite takes the controls of a write whose target has no version: the body's RetryOptions
// (at opts) merged with Idempotency-Key (retryOptions).
func retryWrite[In any](opts func(*In) *carryon.RetryOptions) func(*server, *http.Request, *In) error {
	return func(_ *server, r *http.Request, in *In) error {
		o := opts(in)
		merged, err := retryOptions(r, *o)
		*o = merged
		return err
	}
}

// itself is the place of a body's write controls when the body is nothing else.
func itself[T any](v *T) *T { return v }

// noBody reads nothing: the route takes no request body (whatever is sent is not read).
func noBody(*server, *http.Request) (struct{}, error) { return struct{}{}, nil }

// onID makes a service call on the resource named by the path's {id}.
func onID[In, Out any](call func(context.Context, string, In) (Out, error)) func(context.Context, *http.Request, In) (Out, error) {
	return func(ctx context.Context, r *http.Request, in In) (Out, error) {
		return call(ctx, r.PathValue("id"), in)
	}
}

// noResult adapts a service call that answers nothing (a delete) to the pipeline.
func noResult[In any](call func(context.Context, string, In) error) func(context.Context, string, In) (struct{}, error) {
	return func(ctx context.Context, id string, in In) (struct{}, error) {
		return struct{}{}, call(ctx, id, in)
	}
}
