package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/signpost-proxy/signpost/suggest"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3",
// as deploy/build.sh does; it wins over the module version Go records.
var version = "dev"

const versionHelp = `Usage: signpost version

Prints signpost's version, the Go release that built it, the commit it was
built from (+dirty when the work tree had changes) and the platform.`

// printVersion prints the version line; it takes no flags.
func printVersion(*flag.FlagSet) runFunc {
	return func(_ []string, stdout, _ io.Writer) int {
		fmt.Fprintln(stdout, versionString())
		return exitOK
	}
}

func versionString() string {
	info, _ := debug.ReadBuildInfo()
	return versionLine(version, info)
}

// versionLine is the version line of a binary stamped with set by the
// linker and built as info says (nil when it says nothing): the commit
// and whether the tree was modified come from the build's VCS settings,
// as go build records them in a repository's checkout.
func versionLine(set string, info *debug.BuildInfo) string {
	v, commit, dirty := set, "", false
	if info != nil {
		if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
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
	s := "signpost " + v + " (" + runtime.Version()
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
