package tool

import "encoding/json"

// CheckSchema reports why raw is not a schema a tool's arguments may have (a JSON Schema of an
// object, with types JSON Schema defines), or nil when it is. Tools that come from outside the
// server, such as a client's, are checked with it before they are offered to a model.
func CheckSchema(raw json.RawMessage) error {
	_, err := resolveSchema(raw)
	return err
}
