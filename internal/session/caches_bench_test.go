package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkVerifyGoStepCache is a Go module's verify (ralph's own module: go test of internal/config, which
// builds gopkg.in/yaml.v3 and the standard library it needs) in a step's environment as stepCaches makes it:
// cold, in a fresh step whose only cache is the job's module downloads (this machine's, read as a proxy),
// then warm, again in the same step (phase 2 after phase 1). It reports both and warm/cold; the aim is
// warm ≤ 20% of cold. Run it alone: go test -run '^$' -bench VerifyGoStepCache -benchtime 1x ./internal/session/
func BenchmarkVerifyGoStepCache(b *testing.B) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go on PATH")
	}
	out, err := exec.Command(goBin, "env", "GOMODCACHE").Output()
	if err != nil {
		b.Fatal(err)
	}
	jobMod := strings.TrimSpace(string(out))
	if st, err := os.Stat(filepath.Join(jobMod, "cache", "download")); err != nil || !st.IsDir() {
		b.Skip("no module cache on this machine to seed the step with (go mod download first)")
	}
	module, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		b.Fatal(err)
	}
	verify := func(env []string) time.Duration {
		cmd := exec.Command(goBin, "test", "-count=1", "./internal/config/")
		cmd.Dir, cmd.Env = module, env
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("verify: %v\n%s", err, out)
		}
		return time.Since(start)
	}
	var cold, warm time.Duration
	for b.Loop() {
		home := b.TempDir()
		env := append(stepCaches([]string{"HOME=" + os.Getenv("HOME"), "GOMODCACHE=" + jobMod}, nil, home, func(string) bool { return true }),
			"HOME="+home, "PATH="+os.Getenv("PATH"), "GOFLAGS=-modcacherw", "GOTOOLCHAIN=local")
		cold += verify(env)
		warm += verify(env)
	}
	n := float64(b.N)
	b.ReportMetric(cold.Seconds()/n, "cold-s")
	b.ReportMetric(warm.Seconds()/n, "warm-s")
	b.ReportMetric(100*warm.Seconds()/cold.Seconds(), "warm-%-of-cold")
}
