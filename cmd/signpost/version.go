package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/signpost-proxy/signpost/suggest"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

func printVersion(_ []string, stdout, _ io.Writer) int {
	fmt.Fprintln(stdout, versionString())
	return exitOK
}

func versionString() string {
	s := "signpost " + version
	commit, dirty := "", false
	if info, ok := debug.ReadBuildInfo(); ok {
		if version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			s = "signpost " + info.Main.Version
		}
		for _, kv := range info.Settings {
			switch kv.Key {
			case "vcs.revision":
				commit = kv.Value
			case "vcs.modified":
				dirty = kv.Value == "true"
			}
		}
	}
	s += " (" + runtime.Version()
	if commit != "" {
		if len(commit) > 12 {
			commit = commit[:12]
		}
		if dirty {
			commit += "+dirty"
		}
		s += ", commit " + commit
	}
	return s + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")"
}

func didYouMean(got string, options []string) string {
	if s := suggest.Closest(got, options); s != "" {
		return "did you mean \"" + s + "\"? "
	}
	return ""
}
