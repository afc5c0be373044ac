package mcptool

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/carryon-hub/carryon/internal/tool/workspace"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxResultBytes bounds the text of one call's result, the same bound as read_file's
// (workspace.MaxReadBytes); the rest is cut, on a rune boundary, with a note.
const MaxResultBytes = workspace.MaxReadBytes

// render turns a call's result into the text for the model: text content as it is, other content
// summarised (an image is "[image image/png, 1234 bytes]"), one per line, then the structured
// content as JSON unless a text block already holds the same JSON.
func render(res *mcp.CallToolResult) string {
	var parts, texts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts, texts = append(parts, c.Text), append(texts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, linkSummary(c))
		case *mcp.EmbeddedResource:
			parts = append(parts, resourceSummary(c.Resource))
		default:
			parts = append(parts, fmt.Sprintf("[%s content]", contentType(c)))
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && !holdsJSON(texts, b) {
			parts = append(parts, string(b))
		}
	}
	return clip(strings.Join(parts, "\n"))
}

func orUnknown(mime string) string {
	if mime == "" {
		return "of unknown type"
	}
	return mime
}

func linkSummary(l *mcp.ResourceLink) string {
	s := "[resource link " + l.URI
	if l.Name != "" {
		s += fmt.Sprintf(" %q", l.Name)
	}
	if l.MIMEType != "" {
		s += ", " + l.MIMEType
	}
	if l.Description != "" {
		s += ": " + l.Description
	}
	return s + "]"
}

func resourceSummary(r *mcp.ResourceContents) string {
	if r == nil {
		return "[resource]"
	}
	mime := ""
	if r.MIMEType != "" {
		mime = ", " + r.MIMEType
	}
	if r.Text != "" || len(r.Blob) == 0 {
		return fmt.Sprintf("[resource %s%s]\n%s", r.URI, mime, r.Text)
	}
	return fmt.Sprintf("[resource %s%s, %d bytes]", r.URI, mime, len(r.Blob))
}

// contentType is the "type" of a content block the SDK knows but carryon does not show.
func contentType(c mcp.Content) string {
	var v struct {
		Type string `json:"type"`
	}
	if b, err := c.MarshalJSON(); err == nil && json.Unmarshal(b, &v) == nil && v.Type != "" {
		return v.Type
	}
	return "unknown"
}

// holdsJSON reports whether one of texts is the JSON document structured (as servers are asked
// to send structured content also as text).
func holdsJSON(texts []string, structured []byte) bool {
	var want any
	if json.Unmarshal(structured, &want) != nil {
		return false
	}
	for _, t := range texts {
		var got any
		if json.Unmarshal([]byte(t), &got) == nil && reflect.DeepEqual(got, want) {
			return true
		}
	}
	return false
}

// clip cuts s to MaxResultBytes on a rune boundary and says so.
func clip(s string) string {
	if len(s) <= MaxResultBytes {
		return s
	}
	cut := MaxResultBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s\n[truncated: showing the first %d of %d bytes]", s[:cut], cut, len(s))
}

// serverMessage returns the JSON-RPC error inside err (err itself when there is none).
func serverMessage(err error) error {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return errors.New(werr.Message)
	}
	return err
}
