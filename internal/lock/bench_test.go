package lock

import (
	"context"
	"testing"
	"time"

	"github.com/ralph-dev/gh-ralph/internal/githubtest"
)

// BenchmarkAcquireRelease measures one uncontended acquire and release against the test server, kept by git
// and by the REST API: the wall time, and the API requests it takes (reported as requests/op).
func BenchmarkAcquireRelease(b *testing.B) {
	for _, kind := range []string{"git", "rest"} {
		b.Run(kind, func(b *testing.B) {
			srv := githubtest.New(b, githubtest.Options{})
			api := client(b, srv)
			var refs Refs = RESTRefs{API: api}
			if kind == "git" {
				refs = gitRefs(b, srv)
			}
			l := actions(refs, api, 1, time.Hour)
			ctx := context.Background()
			before := len(srv.Requests())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				lease, err := l.Acquire(ctx, 1)
				if err != nil {
					b.Fatal(err)
				}
				if err := lease.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(len(srv.Requests())-before)/float64(b.N), "requests/op")
		})
	}
}

// BenchmarkHeld measures a run that finds the issue held by a live run: what a refused run costs.
func BenchmarkHeld(b *testing.B) {
	srv := githubtest.New(b, githubtest.Options{})
	api := client(b, srv)
	srv.SetWorkflowRun(1, "in_progress", "")
	ctx := context.Background()
	holder, err := actions(gitRefs(b, srv), api, 1, time.Hour).Acquire(ctx, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer holder.Release(ctx)
	other := actions(gitRefs(b, srv), api, 2, time.Hour)
	before := len(srv.Requests())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := other.Acquire(ctx, 1); err == nil {
			b.Fatal("acquired a held lock")
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(srv.Requests())-before)/float64(b.N), "requests/op")
}
