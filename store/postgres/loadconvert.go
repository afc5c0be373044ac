package postgres

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// converter returns how a dumped value (nil, int64, float64, bool, string, []byte or time.Time) becomes
// a value of the PostgreSQL column type: INTEGER 0/1 becomes boolean, TEXT and BLOB swap as the
// column needs, INTEGER microseconds become a timestamp.
func converter(pgType string) func(any) (any, error) {
	switch pgType {
	case "boolean":
		return func(v any) (any, error) {
			switch x := v.(type) {
			case nil, bool:
				return x, nil
			case int64:
				return x != 0, nil
			case string:
				return strconv.ParseBool(x)
			}
			return nil, fmt.Errorf("%T is not a boolean", v)
		}
	case "bigint", "integer", "smallint":
		return func(v any) (any, error) {
			switch x := v.(type) {
			case nil, int64:
				return x, nil
			case float64:
				if x == float64(int64(x)) {
					return int64(x), nil
				}
			case string:
				return strconv.ParseInt(x, 10, 64)
			}
			return nil, fmt.Errorf("%T %v is not an integer", v, v)
		}
	case "text", "character varying", "character", "json", "jsonb":
		return func(v any) (any, error) {
			var s string
			switch x := v.(type) {
			case nil:
				return nil, nil
			case string:
				s = x
			case []byte:
				s = string(x)
			case int64:
				s = strconv.FormatInt(x, 10)
			case float64:
				s = strconv.FormatFloat(x, 'g', -1, 64)
			default:
				return nil, fmt.Errorf("%T is not text", v)
			}
			if !utf8.ValidString(s) {
				return nil, fmt.Errorf("text that PostgreSQL cannot store: it is not valid UTF-8")
			}
			if strings.ContainsRune(s, 0) {
				return nil, fmt.Errorf("text that PostgreSQL cannot store: it holds a NUL character")
			}
			return s, nil
		}
	case "bytea":
		return func(v any) (any, error) {
			switch x := v.(type) {
			case nil:
				return nil, nil
			case []byte:
				return x, nil
			case string:
				return []byte(x), nil
			}
			return nil, fmt.Errorf("%T is not bytes", v)
		}
	case "timestamp with time zone", "timestamp without time zone":
		return func(v any) (any, error) {
			if us, ok := v.(int64); ok {
				return time.UnixMicro(us).UTC(), nil
			}
			return v, nil
		}
	}
	return func(v any) (any, error) { return v, nil }
}
