package agents

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

// Options are what loading a Set needs from its caller.
type Options struct {
	// Getenv reads the variables the file names (api_key_env, headers_env); default os.Getenv.
	Getenv func(string) string
	// Builtin are the tools compiled into the server: the globs of a profile select among them
	// (and among the MCP servers' tools, which are found when a run starts).
	Builtin []tool.Tool
}

// The file as it is written. Every key is optional to the decoder; validate says which are
// required. Unknown keys are refused by the decoder.
type rawFile struct {
	Providers  map[string]*rawProvider `yaml:"providers"`
	MCPServers map[string]*rawServer   `yaml:"mcp_servers"`
	A2AAgents  map[string]*rawA2A      `yaml:"a2a_agents"`
	Agents     map[string]*rawAgent    `yaml:"agents"`
	Embeddings *rawEmbeddings          `yaml:"embeddings"`
	Prices     map[string]*rawPrice    `yaml:"prices"`
}

type rawProvider struct {
	Kind      string  `yaml:"kind"`
	BaseURL   string  `yaml:"base_url"`
	APIKeyEnv string  `yaml:"api_key_env"`
	Delay     *string `yaml:"delay"`
}

type rawServer struct {
	Command          []string          `yaml:"command"`
	Env              map[string]string `yaml:"env"`
	URL              string            `yaml:"url"`
	HeadersEnv       map[string]string `yaml:"headers_env"`
	TrustAnnotations bool              `yaml:"trust_annotations"`
	CallTimeout      *string           `yaml:"call_timeout"`
	MaxConcurrent    *int              `yaml:"max_concurrent_calls"`
}

type rawAgent struct {
	Provider       string            `yaml:"provider"`
	Model          string            `yaml:"model"`
	Instructions   string            `yaml:"instructions"`
	Tools          []string          `yaml:"tools"`
	Effects        map[string]string `yaml:"effects"`
	Approval       map[string]string `yaml:"approval"`
	MaxSteps       *int              `yaml:"max_steps"`
	ContextBudget  *int              `yaml:"context_budget"`
	RunTokenBudget *int              `yaml:"run_token_budget"`
	// The model limits (limits.go).
	ModelFirstByteTimeout *string `yaml:"model_first_byte_timeout"`
	ModelIdleTimeout      *string `yaml:"model_idle_timeout"`
	ModelTimeout          *string `yaml:"model_timeout"`
	ModelMaxOutputBytes   *int    `yaml:"model_max_output_bytes"`
	// Compaction is the automatic compaction (compaction.go).
	Compaction *rawCompaction `yaml:"compaction"`
	// MemoryExtraction turns learning facts from the profile's sessions on (embeddings.go).
	MemoryExtraction *rawExtraction `yaml:"memory_extraction"`
}

// Load reads and validates the agents file at path. Its errors are EINVALID and read
// "FILE:LINE: KEY: what is wrong".
func Load(path string, opt Options) (*Set, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, carryon.Errorf(carryon.EINVALID, "agents file: %v", err)
	}
	return Parse(path, b, opt)
}

// Parse validates the agents file data, named name in errors.
func Parse(name string, data []byte, opt Options) (*Set, error) {
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, decodeError(name, nil, err)
	}
	pos := positions(f)
	var raw rawFile
	for _, d := range f.Docs {
		if d.Body == nil {
			continue
		}
		// Decoded from the same tree, so a decoder's error carries a token positions knows.
		if err := yaml.NodeToValue(d.Body, &raw, yaml.DisallowUnknownField()); err != nil {
			return nil, decodeError(name, pos, err)
		}
	}
	v := &validator{file: name, pos: pos, getenv: opt.Getenv, builtin: opt.Builtin}
	set := v.resolve(&raw)
	if len(v.errs) > 0 {
		return nil, carryon.Errorf(carryon.EINVALID, "%s", strings.Join(v.errs, "; "))
	}
	return set, nil
}

// filePositions maps the dotted key paths of the file to their lines, and the tokens of the
// file to their paths (to name the key of a decoder's error).
type filePositions struct {
	lines  map[string]int
	tokens map[*token.Token]string
}

func positions(f *ast.File) *filePositions {
	p := &filePositions{lines: map[string]int{}, tokens: map[*token.Token]string{}}
	for _, d := range f.Docs {
		p.walk(d.Body, "")
	}
	return p
}

func (p *filePositions) walk(n ast.Node, path string) {
	if n == nil || reflect.ValueOf(n).IsNil() {
		return
	}
	if tk := n.GetToken(); tk != nil {
		if _, seen := p.tokens[tk]; !seen {
			p.tokens[tk] = path
		}
	}
	switch n := n.(type) {
	case *ast.MappingNode:
		for _, mv := range n.Values {
			p.walk(mv, path)
		}
	case *ast.MappingValueNode:
		key := n.Key.GetToken()
		name := strings.Trim(n.Key.String(), `"'`)
		if key != nil {
			name = key.Value
		}
		child := name
		if path != "" {
			child = path + "." + name
		}
		if key != nil {
			p.lines[child] = key.Position.Line
			p.tokens[key] = child
		}
		p.walk(n.Value, child)
	case *ast.SequenceNode:
		for i, v := range n.Values {
			p.walk(v, fmt.Sprintf("%s[%d]", path, i))
		}
	case *ast.TagNode:
		p.walk(n.Value, path)
	case *ast.AnchorNode:
		p.walk(n.Value, path)
	}
}

// line returns the line of a key path, or of its nearest parent the file has.
func (p *filePositions) line(path string) int {
	for path != "" {
		if l, ok := p.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 1
}

// decodeError turns an error of the YAML parser or decoder into "FILE:LINE: KEY: message".
func decodeError(file string, pos *filePositions, err error) error {
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return carryon.Errorf(carryon.EINVALID, "%s: %v", file, err)
	}
	tk := ye.GetToken()
	msg := ye.GetMessage()
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msg = fmt.Sprintf("must be %s, not %s", kindName(te.DstType), kindName(te.SrcType))
	}
	var ue *yaml.UnknownFieldError
	if errors.As(err, &ue) {
		msg = fmt.Sprintf("unknown key %q", tk.Value)
	}
	key := ""
	if pos != nil {
		key = pos.tokens[tk]
	}
	if key == "" {
		return carryon.Errorf(carryon.EINVALID, "%s:%d: %s", file, tk.Position.Line, msg)
	}
	return carryon.Errorf(carryon.EINVALID, "%s:%d: %s: %s", file, tk.Position.Line, key, msg)
}

// kindName says a Go type as the file's reader knows it.
func kindName(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return t.String()
}
