package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
)

// benchUser is the user `carryon bench --url` works in and the key it works with.
type benchUser struct {
	caller *client.Client
	name   string
	secret string
	// remove is true for a user made for the run: it is forgotten at the end. Otherwise a key
	// made for the run (revoke) is revoked and what the bench wrote stays.
	remove bool
	revoke bool
}

// openBenchUser picks the user: the bench does not write into the caller's own account when it
// may make one of its own. key is the caller's key, named is --user.
func openBenchUser(ctx context.Context, caller *client.Client, key, named string) (*benchUser, error) {
	me, err := caller.Me(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case !me.Admin && named != "" && named != me.Name:
		return nil, fmt.Errorf("--user %s needs an admin key (this key is %s's)", named, me.Name)
	case !me.Admin || named == me.Name:
		return &benchUser{caller: caller, name: me.Name, secret: key}, nil
	case named == "":
		name := "bench-" + carryon.RandomToken(5)
		_, secret, err := caller.CreateUser(ctx, carryon.NewUser{Name: name})
		if err != nil {
			return nil, fmt.Errorf("make the bench's user: %w", err)
		}
		return &benchUser{caller: caller, name: name, secret: secret, remove: true}, nil
	}
	var secret string
	if _, err := caller.GetUser(ctx, named); carryon.ErrorCode(err) == carryon.ENOTFOUND {
		_, secret, err = caller.CreateUser(ctx, carryon.NewUser{Name: named})
		if err != nil {
			return nil, fmt.Errorf("make user %s: %w", named, err)
		}
	} else if err != nil {
		return nil, err
	} else if _, secret, err = caller.CreateKey(ctx, named); err != nil {
		return nil, fmt.Errorf("a key for user %s: %w", named, err)
	}
	return &benchUser{caller: caller, name: named, secret: secret, revoke: true}, nil
}

// close forgets a user made for the run, or revokes the key made for it.
func (u *benchUser) close(ctx context.Context) error {
	if u.remove {
		if _, err := u.caller.ForgetUser(ctx, u.name); err != nil {
			return fmt.Errorf("remove the bench's user %s: %w", u.name, err)
		}
		return nil
	}
	if !u.revoke {
		return nil
	}
	keys, err := u.caller.ListKeys(ctx, u.name)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.RevokedAt == nil && strings.HasPrefix(u.secret, k.Prefix) {
			if err := u.caller.RevokeKey(ctx, k.ID, carryon.RetryOptions{}); err != nil {
				return fmt.Errorf("revoke the bench's key of %s: %w", u.name, err)
			}
		}
	}
	return nil
}
