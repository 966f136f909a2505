package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/cli/go-gh/v2/pkg/jq"
	"github.com/cli/go-gh/v2/pkg/template"
	"github.com/spf13/cobra"

	"github.com/ralph-dev/gh-ralph/internal/inert"
)

// exporter is --json FIELDS, --jq EXPR and --template T, as gh has them.
type exporter struct {
	Fields   []string
	JQ       string
	Template string
}

// jsonFieldsError lists the fields --json takes, after msg when there is one; Exit prints it as a usage
// error.
type jsonFieldsError struct {
	msg    string
	fields []string
}

func (e *jsonFieldsError) Error() string {
	list := "Specify one or more comma-separated fields for `--json`:\n  " + strings.Join(e.fields, "\n  ")
	if e.msg == "" {
		return list // gh's own words, when --json was given no fields
	}
	return e.msg + "\n\n" + list
}

// addJSONFlags adds the three flags to cmd; fields are the names --json accepts.
func addJSONFlags(cmd *cobra.Command, exp *exporter, fields []string) {
	fields = slices.Sorted(slices.Values(fields))
	cmd.Flags().StringSliceVar(&exp.Fields, "json", nil, "Output JSON with the specified `fields`")
	cmd.Flags().StringVarP(&exp.JQ, "jq", "q", "", "Filter JSON output using a jq `expression`")
	cmd.Flags().StringVarP(&exp.Template, "template", "t", "", "Format JSON output using a Go template; see \"gh help formatting\"")
	_ = cmd.RegisterFlagCompletionFunc("json", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return fields, cobra.ShellCompDirectiveNoSpace
	})
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if c == cmd && strings.Contains(err.Error(), "flag needs an argument: --json") {
			return &jsonFieldsError{fields: fields}
		}
		// The root's, found when the error happens: cmd has no parent yet when its flags are added.
		if p := cmd.Parent(); p != nil {
			return p.FlagErrorFunc()(c, err)
		}
		return err
	})
	cmd.Annotations = map[string]string{"help:json-fields": strings.Join(fields, ",")}
}

// check validates the flags before anything is fetched.
func (e *exporter) check(cmd *cobra.Command, fields []string) error {
	if len(e.Fields) == 0 {
		if cmd.Flags().Changed("json") {
			return &jsonFieldsError{fields: slices.Sorted(slices.Values(fields))}
		}
		if e.JQ != "" {
			return flagErrorf(cmd, "cannot use `--jq` without specifying `--json`")
		}
		if e.Template != "" {
			return flagErrorf(cmd, "cannot use `--template` without specifying `--json`")
		}
		return nil
	}
	if e.JQ != "" && e.Template != "" {
		return flagErrorf(cmd, "only one of `--jq` or `--template` may be used")
	}
	for _, f := range e.Fields {
		if !slices.Contains(fields, f) {
			return &jsonFieldsError{msg: fmt.Sprintf("unknown JSON field: %q", f), fields: slices.Sorted(slices.Values(fields))}
		}
	}
	return nil
}

// enabled says whether the output is JSON.
func (e *exporter) enabled() bool { return len(e.Fields) > 0 }

// pick keeps the chosen fields of one object.
func (e *exporter) pick(all map[string]any) map[string]any {
	out := make(map[string]any, len(e.Fields))
	for _, f := range e.Fields {
		out[f] = all[f]
	}
	return out
}

// write encodes data (an object or a list of objects, already picked) through --jq or --template.
func (e *exporter) write(w io.Writer, data any, tty bool, width int) error {
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(data); err != nil {
		return err
	}
	// Every string holds what others may have written (a title, a phase's, a reason): it is made inert
	// before --jq or a template sees it, as gh sanitizes an API's answer, so neither a raw string of
	// --jq nor a template's text gives the terminal a control character; a template's own colour stays.
	var buf bytes.Buffer
	if err := inertJSON(&buf, json.NewDecoder(&raw)); err != nil {
		return err
	}
	if tty && e.JQ == "" && e.Template == "" {
		var indented bytes.Buffer
		if err := json.Indent(&indented, buf.Bytes(), "", "  "); err != nil {
			return err
		}
		buf = indented
	}
	buf.WriteByte('\n')
	switch {
	case e.JQ != "":
		return jq.Evaluate(&buf, w, e.JQ)
	case e.Template != "":
		if width <= 0 {
			width = 80
		}
		t := template.New(w, width, false)
		if err := t.Parse(e.Template); err != nil {
			return err
		}
		if err := t.Execute(&buf); err != nil {
			return err
		}
		return t.Flush()
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// inertJSON copies the one JSON value dec reads to w, compact, with every string (keys included) made
// inert (inert.String) and numbers as they were.
func inertJSON(w *bytes.Buffer, dec *json.Decoder) error {
	dec.UseNumber()
	var value func() error
	str := func(s string) error {
		b, err := json.Marshal(inert.String(s))
		if err != nil {
			return err
		}
		// json.Marshal escapes <, > and & for HTML; the encoder above does not, and neither does this.
		b = bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<"))
		b = bytes.ReplaceAll(b, []byte(`\u003e`), []byte(">"))
		b = bytes.ReplaceAll(b, []byte(`\u0026`), []byte("&"))
		w.Write(b)
		return nil
	}
	value = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case json.Delim:
			obj := v == '{'
			w.WriteRune(rune(v))
			for i := 0; dec.More(); i++ {
				if i > 0 {
					w.WriteByte(',')
				}
				if obj {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					if err := str(k.(string)); err != nil {
						return err
					}
					w.WriteByte(':')
				}
				if err := value(); err != nil {
					return err
				}
			}
			end, err := dec.Token()
			if err != nil {
				return err
			}
			w.WriteRune(rune(end.(json.Delim)))
		case string:
			return str(v)
		case json.Number:
			w.WriteString(v.String())
		case bool:
			w.WriteString(strconv.FormatBool(v))
		case nil:
			w.WriteString("null")
		}
		return nil
	}
	return value()
}
