package mcptool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestConcurrentCallsAndListRefreshes(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "busy"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: objectSchema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Q string }
			if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
				return nil, err
			}
			return text(a.Q + " " + fmt.Sprint(req.Params.GetMeta()[mcptool.MetaIdempotencyKey])), nil
		})
	s := newServer(t, mcptool.Config{Name: "busy", Transport: inMemory(t, srv)})
	tools, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	echo := tools[0]
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				q, key := fmt.Sprintf("g%d-%d", g, i), fmt.Sprintf("run/%d/%d", g, i)
				res, err := echo.Call(context.Background(), tool.Call{Args: json.RawMessage(fmt.Sprintf(`{"q":%q}`, q)), IdempotencyKey: key})
				if err != nil {
					errs <- err
				} else if res.Content != q+" "+key {
					errs <- fmt.Errorf("call %s got %q", q, res.Content)
				}
			}
		})
	}
	wg.Go(func() { // the list changes while the calls run, and is read concurrently
		for i := range 20 {
			addText(srv, fmt.Sprintf("extra%d", i), "x")
			if _, err := s.Tools(context.Background()); err != nil {
				errs <- err
			}
		}
	})
	for range 4 {
		wg.Go(func() {
			for range 20 {
				if _, err := s.Tools(context.Background()); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	eventually(t, "every added tool to be listed", func() bool {
		tools, err := s.Tools(context.Background())
		return err == nil && len(tools) == 21
	})
}
