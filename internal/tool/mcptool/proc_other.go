//go:build !unix

package mcptool

import "os/exec"

// ownProcessGroup does nothing where process groups are not available.
func ownProcessGroup(*exec.Cmd) {}

// killProcessGroup kills cmd's process (its children may outlive it on such systems).
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
