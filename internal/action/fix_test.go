package action

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ralph-dev/gh-ralph/internal/engine"
	"github.com/ralph-dev/gh-ralph/internal/ghapi"
	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

func TestResolveFixPull(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := githubtest.New(t, githubtest.Options{})
	gh, err := ghapi.New(ghapi.Options{Endpoints: ghapi.Endpoints{API: srv.URL, GraphQL: srv.GraphQLURL, Server: srv.ServerURL},
		Token: "test-token", Owner: "octo", Repo: "demo", Transport: srv.Client().Transport,
		Retry: ghapi.Retry{Attempts: 1, Max: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	issue := srv.CreateIssue("mona", "feature", "")
	open := func(branch string) int {
		srv.PushCommit(branch, "ralph", "work", map[string]string{branch + ".txt": "x\n"})
		pr, err := gh.CreatePull(ctx, ghapi.NewPull{Title: "t", Head: branch, Base: "main", Body: "Closes #1"})
		if err != nil {
			t.Fatal(err)
		}
		return pr.Number
	}
	ralphs := open("ralph/1-feature")
	other := open("feature")
	tests := []struct {
		name    string
		pull    int
		want    []int
		wantWhy string
	}{
		{"ralph's pull request: the issue its branch is for", ralphs, []int{issue}, ""},
		{"another branch's pull request, whatever its body closes", other, nil, "pull request #3 is not from a ralph branch (ralph/N-…)"},
		{"no such pull request", 99, nil, "#99 is not a pull request of this repository"},
	}
	for _, tt := range tests {
		trig := Trigger{Action: engine.ActFix, Actor: "mona", Fix: &FixRequest{Cause: FixComment, Pull: tt.pull}}
		why, err := resolveFixPull(ctx, gh, "ralph/", &trig)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if why != tt.wantWhy || !cmp.Equal(trig.Issues, tt.want) {
			t.Errorf("%s: issues %v, why %q; want %v, %q", tt.name, trig.Issues, why, tt.want, tt.wantWhy)
		}
	}
}
