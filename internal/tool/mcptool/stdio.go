package mcptool

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessageBytes bounds one message a stdio server sends: the go-sdk's frame limit
// (mcp.DefaultMaxLineLength, which mcp.CommandTransport applies and cannot change). A longer
// message is not handed to the SDK, which would drop the connection: an answer to a call
// becomes a result that holds the start of its text and says how large the answer was (see
// frameReader); any other message is left out with a warning.
const MaxMessageBytes = mcp.DefaultMaxLineLength

// stdioTransport starts cmd and speaks newline-delimited JSON with it over its stdin and stdout,
// as mcp.CommandTransport does, with two differences: stdout is read through a frameReader, so
// that no message is longer than MaxMessageBytes, and closing the connection ends the process
// as the MCP specification says (stdin closed, then SIGTERM, then SIGKILL, each after grace).
type stdioTransport struct {
	cmd   *exec.Cmd
	grace time.Duration
	log   *slog.Logger
}

// Connect starts the command.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	io := &mcp.IOTransport{
		// The connection is closed by closing stdin, never stdout (the server may still be
		// writing its last words).
		Reader: io.NopCloser(newFrameReader(stdout, MaxMessageBytes, t.log)),
		Writer: &procStdin{stdin: stdin, cmd: t.cmd, grace: t.grace},
		// frameReader already bounds every message; this only keeps the SDK's own guard, with
		// room for what its decoder reads ahead of the message it decodes.
		MaxLineLength: 2 * MaxMessageBytes,
	}
	return io.Connect(ctx)
}

// procStdin writes to the server's stdin; closing it ends the server's process.
type procStdin struct {
	stdin io.WriteCloser
	cmd   *exec.Cmd
	grace time.Duration
}

// Write writes p to the server's stdin.
func (w *procStdin) Write(p []byte) (int, error) { return w.stdin.Write(p) }

// Close closes stdin and waits for the process to exit; after grace it sends SIGTERM, after
// another grace SIGKILL.
func (w *procStdin) Close() error {
	err := w.stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- w.cmd.Wait() }()
	for _, next := range []func(){
		func() { _ = w.cmd.Process.Signal(syscall.SIGTERM) },
		func() { _ = w.cmd.Process.Kill() },
		nil,
	} {
		timer := time.NewTimer(w.grace)
		select {
		case werr := <-exited:
			timer.Stop()
			if err == nil {
				err = werr
			}
			return err
		case <-timer.C:
		}
		if next != nil {
			next()
		}
	}
	return errors.Join(err, errors.New("the MCP server's process did not exit after SIGKILL"))
}
