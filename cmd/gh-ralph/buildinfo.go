package main

import (
	"runtime/debug"
	"strings"
)

// buildVersion is the version and commit stamped with -ldflags, or else what Go recorded in the binary:
// the module's version (go install …@v1.2.3, or go build in a tagged clone) and the VCS revision; "dev"
// when nothing says.
func buildVersion(stamped, stampedCommit string) (version, commit string) {
	version, commit = strings.TrimPrefix(stamped, "v"), stampedCommit
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return orDev(version), commit
	}
	if version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		version = strings.TrimPrefix(info.Main.Version, "v")
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && commit == "" {
			commit = s.Value
		}
	}
	return orDev(version), commit
}

func orDev(v string) string {
	if v == "" {
		return "dev"
	}
	return v
}
