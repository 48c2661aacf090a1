package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionLine: the version the linker set wins; without one, the
// module version go build records; the commit and +dirty come from the
// build's VCS settings whichever way the binary was built.
func TestVersionLine(t *testing.T) {
	const rev = "86f560fc535d56923eb4520f2bb8cc9558117a07"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name string
		set  string
		info *debug.BuildInfo
		want string // between "signpost " and " (go..."; then the commit part
		tail string
	}{
		{"no build info", "dev", nil, "dev", ""},
		{"go run, no VCS", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev", ""},
		{"a local build in a checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201165253-86f560fc535d"}, Settings: vcs("false")},
			"v0.0.0-20261201165253-86f560fc535d", ", commit 86f560fc535d"},
		{"a local build with changes", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201165253-86f560fc535d+dirty"}, Settings: vcs("true")},
			"v0.0.0-20261201165253-86f560fc535d+dirty", ", commit 86f560fc535d+dirty"},
		{"deploy/build.sh's ldflags", "v1.4.0-3-g86f560f-dirty", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201165253-86f560fc535d"}, Settings: vcs("true")},
			"v1.4.0-3-g86f560f-dirty", ", commit 86f560fc535d+dirty"},
		{"ldflags without VCS settings", "v1.4.0", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "v1.4.0", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := "signpost " + tc.want + " (" + runtime.Version() + tc.tail + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")"
			if got := versionLine(tc.set, tc.info); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// TestNoArguments: signpost alone prints its usage, every command in it,
// on standard error, and exits 2.
func TestNoArguments(t *testing.T) {
	code, stdout, stderr := run(t)
	if code != exitUsage || stdout != "" {
		t.Errorf("exit %d, stdout %q; want %d and nothing", code, stdout, exitUsage)
	}
	for _, c := range commands {
		if !strings.Contains(stderr, "\n  signpost "+c.name) {
			t.Errorf("the usage lacks %s:\n%s", c.name, stderr)
		}
	}
}
