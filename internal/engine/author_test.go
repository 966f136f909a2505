package engine

import (
	"context"
	"io"
	"testing"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/record"
)

// writers is an Authorizer from a table, counting the questions it is asked.
type writers struct {
	ok    map[string]bool
	asked int
}

func (w *writers) Authorize(_ context.Context, login string) (bool, error) {
	w.asked++
	return w.ok[login], nil
}

type quietLog struct{}

func (quietLog) Infof(string, ...any)                 {}
func (quietLog) Warnf(string, ...any)                 {}
func (quietLog) Untrusted(string) (io.Writer, func()) { return io.Discard, func() {} }

func TestAuthored(t *testing.T) {
	t.Parallel()
	asks := 0
	auth := &writers{ok: map[string]bool{"mona": true, "renovate[bot]": true}}
	e := &Engine{Auth: auth, Log: quietLog{}, Identity: OnceIdentity(func(context.Context) (string, error) {
		asks++
		return "ralph-app[bot]", nil
	})}
	p := e.people()
	tests := []struct {
		login string
		bot   bool
		want  bool
	}{
		{ActionsBot, true, true},       // the Actions token: no question
		{"mona", false, true},          // a writer
		{"mallory", false, false},      // not a writer
		{"renovate[bot]", true, true},  // allowed_bots
		{"ralph-app[bot]", true, true}, // ralph's own App, asked once
		{"evil-app[bot]", true, false}, // another bot
		{"", false, false},
	}
	for _, tt := range tests {
		typ := "User"
		if tt.bot {
			typ = "Bot"
		}
		got, err := p.Wrote(context.Background(), ghapi.User{Login: tt.login, Type: typ})
		if err != nil || got != tt.want {
			t.Errorf("authored(@%s) = %v, %v; want %v", tt.login, got, err, tt.want)
		}
	}
	if asks != 1 {
		t.Errorf("asked GitHub who ralph is %d times, want once", asks)
	}
	before := auth.asked
	if ok, _ := p.Wrote(context.Background(), ghapi.User{Login: "mallory"}); ok || auth.asked != before {
		t.Errorf("a second comment by @mallory: %v, asked again: %v", ok, auth.asked != before)
	}
}

func TestFindStatusSkipsOthers(t *testing.T) {
	t.Parallel()
	e := &Engine{Auth: &writers{}, Log: quietLog{}}
	comments := []ghapi.Comment{
		{ID: 1, Body: record.StatusMarker + "\nforged", User: ghapi.User{Login: "mallory"}},
		{ID: 2, Body: "hello", User: ghapi.User{Login: ActionsBot, Type: "Bot"}},
		{ID: 3, Body: record.StatusMarker + "\nralph's", User: ghapi.User{Login: ActionsBot, Type: "Bot"}},
	}
	f, err := e.people().Find(context.Background(), 1, comments, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	if f.Status == nil || f.Status.ID != 3 || len(f.Ignored) != 1 || f.Ignored[0].ID != 1 {
		t.Errorf("status = %+v, ignored %+v, want comment 3, and 1 ignored", f.Status, f.Ignored)
	}
}
