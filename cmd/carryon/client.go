package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"strings"

	"github.com/carryon-hub/carryon/client"
	"github.com/carryon-hub/carryon/internal/users"
)

// clientFlags locate a server and the key to talk to it with.
type clientFlags struct {
	server, key, data string
}

func (c *clientFlags) register(fs *flag.FlagSet, getenv env) {
	fs.StringVar(&c.server, "server", "http://"+DefaultAddr, "server URL")
	fs.StringVar(&c.key, "key", "", "API key; default the local key file in the data directory")
	fs.StringVar(&c.data, "data", defaultDataDir(getenv), "data directory of a local server, for its key file")
}

// client returns an HTTP client of the server, authenticated by --key or the local key file.
func (c *clientFlags) client() (*client.Client, error) {
	key := c.key
	if key == "" {
		k, err := users.ReadLocalKey(c.data)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no API key: pass --key or CARRYON_KEY, or point --data at a local server's data directory (no %s/%s)", c.data, users.LocalKeyFile)
		} else if err != nil {
			return nil, err
		}
		key = k
	}
	return client.New(strings.TrimRight(c.server, "/"), key), nil
}
