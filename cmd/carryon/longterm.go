package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
)

const longTermUsage = `usage: carryon memory COMMAND [flags]
  put NS KEY VALUE_JSON [--text T] [--ttl D]   remember a JSON value (a bare word is taken as a string)
  get NS KEY                                   print an item as JSON
  rm NS KEY                                    forget an item
  ls [--namespace NS] [--limit N] [--json]     list items by namespace and key
  search QUERY... [--namespace NS] [--limit N] [--json]
                                               most relevant first; no words lists the newest
  Namespaces are dot-separated segments of a-z, 0-9, _ and - (prefs, projects.alpha); --namespace NS
  also covers the namespaces under NS. Only the key's user's memory is ever read or written.

Examples:
  carryon memory put prefs editor '"vim"' --text "prefers vim"
  carryon memory put projects.alpha deadline '"2025-06-30"' --ttl 720h
  carryon memory search editor preference --namespace prefs
  carryon memory ls --namespace projects
  carryon memory rm prefs editor`

func runLongTerm(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	fs := newFlagSet("memory", longTermUsage, stdout)
	var cf clientFlags
	cf.register(fs.FlagSet, getenv)
	text := fs.String("text", "", "the text search matches (put)")
	ttl := fs.Duration("ttl", 0, "forget the item after this long, e.g. 720h (put)")
	ns := fs.String("namespace", "", "only this namespace and those under it (ls, search)")
	limit := fs.Int("limit", 0, "how many items (ls, search)")
	asJSON := fs.Bool("json", false, "print JSON (ls, search)")
	if len(args) == 0 {
		return fs.misuse()
	} else if isHelp(args[0]) {
		return fs.help()
	}
	pos, err := fs.parse(getenv, args[1:])
	if err != nil {
		return err
	}
	if want, ok := map[string]int{"put": 3, "get": 2, "rm": 2, "ls": 0, "search": len(pos)}[args[0]]; !ok || len(pos) != want {
		return fs.misuse()
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	m := c.LongTerm()
	switch cmd := args[0]; {
	case cmd == "put" && len(pos) == 3:
		value := json.RawMessage(pos[2])
		if !json.Valid(value) {
			value, _ = json.Marshal(pos[2])
		}
		if *ttl < 0 || *ttl%time.Second != 0 {
			return usagef("--ttl must be a positive whole number of seconds, e.g. 90s or 720h")
		}
		it, err := m.Put(ctx, pos[0], pos[1], carryon.LongTermPut{Value: value, Text: *text, TTLSeconds: int64(*ttl / time.Second)})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "remembered %s/%s\n", it.Namespace, it.Key)
		return err
	case cmd == "get" && len(pos) == 2:
		it, err := m.Get(ctx, pos[0], pos[1])
		if err != nil {
			return err
		}
		return printJSON(stdout, it)
	case cmd == "rm" && len(pos) == 2:
		if err := m.Delete(ctx, pos[0], pos[1], carryon.WriteOptions{}); err != nil {
			return err
		}
		_, err := fmt.Fprintf(stdout, "forgot %s/%s\n", pos[0], pos[1])
		return err
	case cmd == "ls" && len(pos) == 0:
		page, err := m.List(ctx, carryon.LongTermFilter{Namespace: *ns, Limit: *limit})
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, page)
		}
		return printLongTermItems(stdout, page.Items)
	case cmd == "search":
		query := ""
		for i, p := range pos {
			if i > 0 {
				query += " "
			}
			query += p
		}
		res, err := m.Search(ctx, carryon.LongTermSearch{Query: query, Namespace: *ns, Limit: *limit})
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, res)
		}
		for _, it := range res.Items {
			if _, err := fmt.Fprintln(stdout, contextbuild.RenderLongTermItem(it)); err != nil {
				return err
			}
		}
		return nil
	}
	return fs.misuse()
}

func printLongTermItems(w io.Writer, items []*carryon.LongTermItem) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tKEY\tUPDATED\tEXPIRES\tVALUE")
	for _, it := range items {
		exp := "-"
		if it.ExpiresAt != nil {
			exp = it.ExpiresAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", it.Namespace, it.Key, it.UpdatedAt.Local().Format(time.DateTime), exp, clip(string(it.Value), 80))
	}
	return tw.Flush()
}
