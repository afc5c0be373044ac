package agents_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/tool"
)

// TestRuleKeysNameBuiltinTools: a key of effects or approval that no built-in tool of the
// profile has is a load error with its line and the nearest names, even when a glob of the
// profile's tools would match it (read_* matches read_fil); so is a glob that matches nothing.
func TestRuleKeysNameBuiltinTools(t *testing.T) {
	t.Parallel()
	const head = "providers:\n  p: {kind: scripted}\nmcp_servers:\n  files: {command: [srv]}\nagents:\n  default:\n    provider: p\n"
	cases := []struct{ name, src, want string }{
		{"typo under a glob", head + "    tools: [\"read_*\"]\n    approval: {read_fil: always}\n",
			"agents.yaml:9: agents.default.approval.read_fil: the agent's tools do not include read_fil (nearest: read_file)"},
		{"typo under *", head + "    tools: [\"*\"]\n    effects: {wirte_file: idempotent}\n",
			"agents.yaml:9: agents.default.effects.wirte_file: the agent's tools do not include wirte_file (nearest: write_file)"},
		{"nothing near", head + "    tools: [read_file]\n    approval: {deploy: always}\n",
			"agents.default.approval.deploy: the agent's tools do not include deploy (its tools: read_file)"},
		{"a built-in tool not selected", head + "    tools: [read_file]\n    approval: {write_file: always}\n",
			"agents.default.approval.write_file: the agent's tools do not include write_file (a built-in tool that no entry of its tools selects: read_file)"},
		{"a server the profile does not use", head + "    tools: [read_file]\n    approval: {files__write_file: always}\n",
			"agents.default.approval.files__write_file: the agent's tools do not include files__write_file (no entry of its tools names MCP server files)"},
		{"an MCP tool not selected", head + "    tools: [\"files__read_*\"]\n    approval: {files__write_file: always}\n",
			"agents.default.approval.files__write_file: the agent's tools do not include files__write_file (no entry of its tools selects it: files__read_*)"},
		{"a glob key that matches nothing", head + "    tools: [read_file, list_files]\n    approval: {\"delete_*\": always}\n",
			"agents.yaml:9: agents.default.approval.delete_*: matches none of the agent's tools (they are: list_files, read_file)"},
		{"a tools glob that matches nothing", head + "    tools: [\"reed_*\"]\n",
			`agents.yaml:8: agents.default.tools[0]: "reed_*" matches no built-in tool`},
		{"a glob over no server", head + "    tools: [\"fil*__*\"]\n",
			`agents.default.tools[0]: "fil*__*" matches no built-in tool`},
		{"not a key", head + "    tools: [read_file]\n    approval: {\"a/b\": always}\n",
			"agents.default.approval.a/b: is not a tool name"},
		{"a reconcilable glob", head + "    tools: [write_file]\n    effects: {\"write_*\": reconcilable}\n",
			"agents.default.effects.write_*: reconcilable is for one tool that can check the world: name it, not a glob"},
		{"two globs of one length", head + "    tools: [read_file]\n    approval: {\"read_*\": always, \"*_file\": never}\n",
			"agents.default.approval.*_file: and approval.read_* both match read_file, with different values"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if msg := parseErr(t, c.src, nil); !strings.Contains(msg, c.want) {
				t.Fatalf("error %q\nlacks %q", msg, c.want)
			}
		})
	}
}

// TestRulesExactThenLongestGlob: a tool takes the exact key, else the longest glob that matches
// it, else the default (its own class; never); the view and the selected tools say so.
func TestRulesExactThenLongestGlob(t *testing.T) {
	t.Parallel()
	src := `providers:
  p: {kind: scripted}
mcp_servers:
  files: {command: [srv]}
agents:
  default:
    provider: p
    tools: [read_file, list_files, write_file, "files__*"]
    effects: {"files__*": read, "files__write_*": unsafe, "*_files": idempotent}
    approval: {"*": always, "list_*": never, "files__read_text_file": never}
`
	set, err := agents.Parse("agents.yaml", []byte(src), agents.Options{Builtin: builtin()})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Profile("default")
	files := source{tools: []tool.Tool{named("files__read_text_file"), named("files__write_file"), named("files__list_directory")}}
	got, missing, err := agents.Tools(t.Context(), p, builtin(), map[string]tool.Source{"files": files})
	if err != nil || missing != nil {
		t.Fatal(err, missing)
	}
	type rule struct {
		effect   carryon.EffectClass
		approval string
	}
	want := map[string]rule{
		"read_file":             {carryon.EffectRead, carryon.ApprovalAlways},         // its own class; *
		"list_files":            {carryon.EffectIdempotent, carryon.ApprovalNever},    // *_files; list_*
		"write_file":            {carryon.EffectReconcilable, carryon.ApprovalAlways}, // its own; *
		"files__read_text_file": {carryon.EffectRead, carryon.ApprovalNever},          // files__*; exact
		"files__write_file":     {carryon.EffectUnsafe, carryon.ApprovalAlways},       // files__write_* is longer
		"files__list_directory": {carryon.EffectRead, carryon.ApprovalAlways},         // files__*; *
	}
	if len(got) != len(want) {
		t.Fatalf("tools %v", got)
	}
	for _, tl := range got {
		if w := want[tl.Name()]; tl.Effect() != w.effect || p.ApprovalOf(tl.Name()) != w.approval {
			t.Errorf("%s: %s, approval %s; want %v", tl.Name(), tl.Effect(), p.ApprovalOf(tl.Name()), w)
		}
	}
	if r := p.Rule("files__write_file", carryon.EffectUnsafe); r.EffectKey != "files__write_*" || r.ApprovalKey != "*" {
		t.Fatalf("rule %+v", r)
	}
	if r := p.Rule("files__read_text_file", carryon.EffectUnsafe); r.ApprovalKey != "files__read_text_file" {
		t.Fatalf("rule %+v", r)
	}
	a, _ := set.Agent("default")
	for _, tl := range a.Tools {
		if w := want[tl.Name]; tl.Effect != w.effect || tl.Approval != w.approval {
			t.Errorf("view of %s: %+v, want %v", tl.Name, tl, w)
		}
	}
}

// TestToolsRefuseKeysTheServerDoesNotList: when a server lists its tools, a key that names one it
// does not list (counter__bmup for counter__bump) refuses the run's tools with an error that says
// the file, the line, the key and the nearest names; a server that does not answer is not judged.
func TestToolsRefuseKeysTheServerDoesNotList(t *testing.T) {
	t.Parallel()
	const head = "providers:\n  p: {kind: scripted}\nmcp_servers:\n  counter: {command: [srv]}\nagents:\n  default:\n    provider: p\n"
	counter := map[string]tool.Source{"counter": source{tools: []tool.Tool{named("counter__bump"), named("counter__peek")}}}
	cases := []struct{ name, src, want string }{
		{"approval", head + "    tools: [\"counter__*\"]\n    approval: {counter__bmup: always}\n",
			"agents.yaml:9: agents.default.approval.counter__bmup: the agent's tools do not include counter__bmup: MCP server counter lists no such tool (nearest: counter__bump)"},
		{"effects", head + "    tools: [\"counter__*\"]\n    effects: {counter__peak: read}\n",
			"agents.yaml:9: agents.default.effects.counter__peak: the agent's tools do not include counter__peak: MCP server counter lists no such tool (nearest: counter__peek)"},
		{"glob key", head + "    tools: [\"counter__*\"]\n    approval: {\"counter__reset*\": always}\n",
			"agents.default.approval.counter__reset*: matches none of the agent's tools (they are: counter__bump, counter__peek)"},
		{"global glob key", head + "    tools: [\"counter__*\"]\n    approval: {\"*_reset\": always}\n",
			"agents.default.approval.*_reset: matches none of the agent's tools"},
		{"tools entry", head + "    tools: [counter__bumpp]\n",
			`agents.yaml:8: agents.default.tools[0]: "counter__bumpp" is not a tool of MCP server counter (nearest: counter__bump)`},
		{"tools glob", head + "    tools: [\"counter__x*\"]\n",
			`agents.default.tools[0]: "counter__x*" matches no tool of MCP server counter (it lists: counter__bump, counter__peek)`},
		{"two problems in order", head + "    tools: [\"counter__*\"]\n    effects: {counter__peak: read}\n    approval: {counter__bmup: always}\n",
			"agents.yaml:9: agents.default.effects.counter__peak: the agent's tools do not include counter__peak: MCP server counter lists no such tool (nearest: counter__peek); agents.yaml:10: agents.default.approval.counter__bmup"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			set, err := agents.Parse("agents.yaml", []byte(c.src), agents.Options{Builtin: builtin()})
			if err != nil {
				t.Fatalf("the file is refused at load, where the server's tools are not known: %v", err)
			}
			p, _ := set.Profile("default")
			got, missing, err := agents.Tools(t.Context(), p, builtin(), counter)
			if carryon.ErrorCode(err) != carryon.EINVALID || got != nil || missing != nil {
				t.Fatalf("tools %v, missing %v, err %v", got, missing, err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "agent default") {
				t.Fatalf("error %q\nlacks %q", err, c.want)
			}
			// The check command's list says the same.
			if _, err := set.ListTools(t.Context(), builtin(), counter); carryon.ErrorCode(err) != carryon.EINVALID || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ListTools: %v", err)
			}
			// A server that does not answer offers nothing, so nothing of it is judged.
			down := errors.New("connection refused")
			got, missing, err = agents.Tools(t.Context(), p, builtin(), map[string]tool.Source{"counter": source{err: down}})
			if err != nil || !errors.Is(missing, down) || len(got) != 0 {
				t.Fatalf("with the server down: tools %v, missing %v, err %v", got, missing, err)
			}
		})
	}
	// Keys that match: the tools with their rules; ListTools names each tool's server.
	set, err := agents.Parse("agents.yaml", []byte(head+"    tools: [\"counter__*\", read_file]\n    approval: {counter__bump: always}\n    effects: {counter__peek: read}\n"), agents.Options{Builtin: builtin()})
	if err != nil {
		t.Fatal(err)
	}
	list, err := set.ListTools(t.Context(), builtin(), counter)
	if err != nil {
		t.Fatal(err)
	}
	want := []carryon.AgentTool{{Name: "read_file", Effect: carryon.EffectRead, Approval: carryon.ApprovalNever},
		{Name: "counter__bump", Effect: carryon.EffectUnsafe, Approval: carryon.ApprovalAlways, MCPServer: "counter"},
		{Name: "counter__peek", Effect: carryon.EffectRead, Approval: carryon.ApprovalNever, MCPServer: "counter"}}
	if got := list.Items[0].Tools; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("tools %+v\nwant  %+v", got, want)
	}
	if _, err := set.ListTools(t.Context(), builtin(), map[string]tool.Source{"counter": source{err: errors.New("no such program")}}); carryon.ErrorCode(err) != carryon.EUNAVAILABLE ||
		!strings.Contains(err.Error(), "MCP server counter: no such program") {
		t.Fatalf("ListTools with the server down: %v", err)
	}
}
