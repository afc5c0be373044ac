// Package failpoint lets crash tests kill the process at a named point of the code, to prove that
// recovery decides correctly what happened. It is off unless the environment variable
// CARRYON_FAILPOINT names points; then the process sends itself SIGKILL when it reaches one (no
// deferred function runs, no buffer is flushed: exactly like a crash).
//
// CARRYON_FAILPOINT is a comma-separated list of NAME or NAME@N (the Nth time the point is
// reached; default the first). The points are listed in docs/RECOVERY.md.
package failpoint

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// The failpoints of the run engine.
const (
	// ActionStarted is after an action's started record is durable, before its tool runs.
	ActionStarted = "action-started"
	// WriteMidway is in the middle of write_file's multi-chunk write of its temporary file.
	WriteMidway = "write-midway"
	// ActionRan is after the tool ran, before its outcome is journaled.
	ActionRan = "action-ran"
	// ActionFinished is after the outcome is journaled, before the step's checkpoint.
	ActionFinished = "action-finished"
	// StepCommitted is after a step's results and checkpoint are committed, before the next step
	// (after the final answer: before the run is recorded as finished).
	StepCommitted = "step-committed"
	// ModelCall is during a model call, when its first streamed chunk arrived.
	ModelCall = "model-call"
	// AppendPatched is inside the transaction of an append with a working-memory patch, after
	// the patch and before the messages: a crash there must leave neither.
	AppendPatched = "append-patched"
	// StepPatched is inside the transaction of a step's checkpoint that changes the working
	// memory, after the memory change and before the step's messages: a crash there must leave
	// neither.
	StepPatched = "step-patched"
	// CompactWriting is inside the transaction of a run's automatic compaction, after its summary
	// and before the commit: a crash there must leave no compaction, and the step compacts again.
	CompactWriting = "compact-writing"
	// CompactStored is after a run's automatic compaction committed, before the model call it
	// was made for: the step's next attempt must find it and not compact again.
	CompactStored = "compact-stored"
	// ForgetStep is after each committed step of forgetting a user's session (a batch of its
	// rows, or the session row itself): a crash there must lose no progress of the forget.
	ForgetStep = "forget-step"
	// ImportWriting is inside the transaction of a session import, after its messages and before
	// the rest of its rows: a crash there must leave nothing of the import.
	ImportWriting = "import-writing"
	// ImportCommitted is after a session import committed, before its staged workspace files
	// are moved into place: the sweeper must finish the move.
	ImportCommitted = "import-committed"
)

var (
	once   sync.Once
	mu     sync.Mutex
	armed  map[string]int // point -> the hit that kills
	counts map[string]int
)

func load() {
	armed, counts = map[string]int{}, map[string]int{}
	for _, spec := range strings.Split(os.Getenv("CARRYON_FAILPOINT"), ",") {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue
		}
		name, nth, _ := strings.Cut(spec, "@")
		n, err := strconv.Atoi(nth)
		if err != nil || n < 1 {
			n = 1
		}
		armed[name] = n
	}
}

// Hit kills the process if the point is armed and this is the hit it waits for.
func Hit(name string) {
	once.Do(load)
	if len(armed) == 0 {
		return
	}
	mu.Lock()
	counts[name]++
	kill := armed[name] != 0 && counts[name] == armed[name]
	mu.Unlock()
	if kill {
		os.Stderr.WriteString("failpoint " + name + ": killing the process\n")
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL is not instant; never go on
	}
}
