package scripted_test

import (
	"testing"

	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/carryon-hub/carryon/internal/model/scripted"
)

// TestConformance: the offline scripted model keeps the provider contract too; its text is its
// own, its tool call the one a "/tool" line of the user's message asks for.
func TestConformance(t *testing.T) {
	t.Parallel()
	tools := []model.ToolSpec{{Name: "list_files"}} // no working memory tools: a message is not a new task
	modeltest.TestConformance(t, modeltest.Conformance{
		Text: func(t *testing.T) (model.Provider, model.Request, string) {
			return scripted.New(0), model.Request{Tools: tools, Messages: []model.Message{{Role: model.RoleUser, Content: "hello there"}}}, ""
		},
		Tool: func(t *testing.T) (model.Provider, model.Request, string) {
			return scripted.New(0), model.Request{Tools: tools, Messages: []model.Message{{Role: model.RoleUser, Content: "look\n/tool list_files {}"}}}, "list_files"
		},
	})
}
