package mcptool

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
)

// maxNameLen is the longest tool name providers accept (^[a-zA-Z0-9_-]{1,64}$).
const maxNameLen = 64

// hashLen is the number of hex digits of the suffix that keeps cut or colliding names apart.
const hashLen = 8

var (
	validNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	invalidRune = regexp.MustCompile(`[^a-zA-Z0-9_-]`)
)

// exposedNames maps each MCP tool name of server to the name the model calls it by. A name is
// <server>__<tool> with every character outside [a-zA-Z0-9_-] replaced by "_". A name longer than
// 64 characters is cut and ends in "_" and 8 hex digits of the SHA-256 of the original MCP name.
// A changed name that meets another tool's name gets the same suffix; names that needed no change
// keep it. The result depends only on the set of names, never on their order.
func exposedNames(server string, tools []string) map[string]string {
	out := make(map[string]string, len(tools))
	taken := make(map[string]string) // exposed name -> MCP name
	var changed []string
	for _, t := range tools {
		raw := server + "__" + t
		if validNameRE.MatchString(raw) {
			out[t], taken[raw] = raw, t
		} else {
			changed = append(changed, t)
		}
	}
	slices.Sort(changed)
	// How many changed names each candidate would get, to find collisions among them as a set.
	candidates := make(map[string]int)
	for _, t := range changed {
		candidates[clean(server, t)]++
	}
	for _, t := range changed {
		name := clean(server, t)
		if _, clash := taken[name]; clash || candidates[name] > 1 {
			name = suffixed(name, t, hashLen)
		}
		// A suffixed name that still meets another (a hash collision or a real tool that happens to be
		// called so) takes a longer suffix.
		for n := hashLen + 2; ; n += 2 {
			prev, clash := taken[name]
			if !clash || prev == t {
				break
			}
			name = suffixed(clean(server, t), t, min(n, 2*sha256.Size))
			if n >= 2*sha256.Size {
				break
			}
		}
		out[t], taken[name] = name, t
	}
	return out
}

// clean replaces the characters a tool name may not hold and cuts it to 64 characters (with a
// hash suffix when cut).
func clean(server, tool string) string {
	name := invalidRune.ReplaceAllString(server+"__"+tool, "_")
	if len(name) > maxNameLen {
		return suffixed(name, tool, hashLen)
	}
	return name
}

// suffixed returns name cut so that "_" and n hex digits of the hash of tool fit in 64 characters.
func suffixed(name, tool string, n int) string {
	sum := sha256.Sum256([]byte(tool))
	h := hex.EncodeToString(sum[:])[:n]
	if keep := maxNameLen - 1 - n; len(name) > keep {
		name = name[:keep]
	}
	return name + "_" + h
}
