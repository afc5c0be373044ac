// Package jsongate is the one input gate for JSON that clients send to carryon, on every front
// door: the native API (httpapi), the OpenAI-compatible routes (openaiapi) and MCP tool
// arguments (mcpserver). Whatever it accepts can be stored and read back by every mainstream
// JSON client:
//
//   - one JSON value, valid UTF-8, without a lone UTF-16 surrogate in a \u escape (encoding/json
//     would replace it with U+FFFD);
//   - no NUL character (a \u0000 escape) in a string or a name (PostgreSQL cannot store it);
//   - every number within the range of a 64-bit float (1e400 is valid JSON that a client reading
//     doubles cannot read back);
//   - each name at most once in an object, at any depth (encoding/json would keep the last);
//   - nesting at most MaxDepth objects and arrays deep;
//   - for a value decoded into a Go type, field names exactly as declared: encoding/json matches
//     {"Messages": …} to messages, and this package refuses it, like a name the type does not have.
//
// Errors are *Error values: a sentence that says what and where (field "messages[2].role"), and
// the path on its own for a door that names the field apart (the OpenAI error's param).
package jsongate
