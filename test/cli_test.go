package test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runCLI runs the binary to its end, bounded, and returns its output and
// exit code.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = childEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		code = ee.ExitCode()
	default:
		t.Fatalf("signpost %v: %v (context: %v)\nstdout:\n%s\nstderr:\n%s", args, err, ctx.Err(), &out, &errb)
	}
	return out.String(), errb.String(), code
}

// brokenProblems are the problems testdata/broken.yaml must produce, in
// file order: the exact position and key path, and the gist of the message.
var brokenProblems = []struct{ at, gist string }{
	{"testdata/broken.yaml:7:5: routes.update_ticket: ", `unknown key "feilds"; did you mean "fields"?`},
	{"testdata/broken.yaml:10:9: routes.update_ticket.errors[0].message: ", "missing"},
	{"testdata/broken.yaml:16:22: routes.create_ticket.fields.status.enum: ", "non-empty list"},
	{"testdata/broken.yaml:19:25: routes.create_ticket.errors[0].match.status: ", "302"},
	{"testdata/broken.yaml:20:15: routes.create_ticket.errors[0].code: ", `"InvalidPriority" must be snake_case`},
	{"testdata/broken.yaml:21:16: routes.create_ticket.errors[0].field: ", `"priorty"`},
}

// wantBrokenProblems checks that text lists every problem of broken.yaml,
// each on a line of its own, in file order.
func wantBrokenProblems(t *testing.T, text string) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "testdata/broken.yaml:") {
			lines = append(lines, l)
		}
	}
	if len(lines) != len(brokenProblems) {
		t.Errorf("%d positioned problem lines, want %d:\n%s", len(lines), len(brokenProblems), text)
	}
	for i, p := range brokenProblems {
		if i >= len(lines) {
			t.Errorf("missing problem %s%s", p.at, p.gist)
			continue
		}
		if !strings.HasPrefix(lines[i], p.at) || !strings.Contains(lines[i][len(p.at):], p.gist) {
			t.Errorf("problem %d = %q, want %q followed by a message containing %q", i+1, lines[i], p.at, p.gist)
		}
	}
}

// TestCLI runs the commands other than serve, and serve on a broken rule
// file, checking exit codes and what they print.
func TestCLI(t *testing.T) {
	t.Parallel()

	t.Run("version", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLI(t, "version")
		if code != 0 || errOut != "" {
			t.Errorf("exit %d, stderr %q; want 0 and nothing", code, errOut)
		}
		if !regexp.MustCompile(`^signpost \S+ \(go1\.[^,]+.*, [a-z0-9]+/[a-z0-9]+\)\n$`).MatchString(out) {
			t.Errorf("stdout = %q, want e.g. \"signpost dev (go1.26.8, linux/amd64)\"", out)
		}
	})

	t.Run("check the shipped rules", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLI(t, "check", ticketsConfig, "../configs/bookings.yaml", "../configs/payments.yaml", "../configs/search.yaml",
			"testdata/small_limits.yaml", "testdata/tickets_before.yaml", "testdata/many_fields.yaml")
		if code != 0 || errOut != "" {
			t.Errorf("exit %d, stderr %q; want 0 and nothing", code, errOut)
		}
		want := "../configs/tickets.yaml: ok: 5 routes, 11 fields, 10 error rules\n" +
			"../configs/bookings.yaml: ok: 2 routes, 5 fields, 3 error rules\n" +
			"../configs/payments.yaml: ok: 1 route, 3 fields, 4 error rules\n" +
			"../configs/search.yaml: ok: 1 route, 2 fields, 2 error rules\n" +
			"testdata/small_limits.yaml: ok: 1 route, 2 fields, 1 error rule\n" +
			"testdata/tickets_before.yaml: ok: 2 routes, 6 fields, 4 error rules\n" +
			"testdata/many_fields.yaml: ok: 1 route, 12 fields, 1 error rule\n"
		if out != want {
			t.Errorf("stdout =\n%s\nwant\n%s", out, want)
		}
	})

	t.Run("check lists every problem", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLI(t, "check", "testdata/broken.yaml", ticketsConfig)
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		wantBrokenProblems(t, errOut)
		want := "testdata/broken.yaml: 6 problems\n../configs/tickets.yaml: ok: 5 routes, 11 fields, 10 error rules\n"
		if out != want {
			t.Errorf("stdout =\n%s\nwant\n%s", out, want)
		}
	})

	t.Run("check a missing file", func(t *testing.T) {
		t.Parallel()
		_, errOut, code := runCLI(t, "check", "testdata/missing.yaml")
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
		if want := "testdata/missing.yaml: cannot read the rule file: no such file or directory\n"; errOut != want {
			t.Errorf("stderr = %q, want %q", errOut, want)
		}
	})

	t.Run("serve refuses a broken rule file", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLI(t, "serve", "--config", "testdata/broken.yaml", "--upstream", "http://127.0.0.1:9",
			"--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0")
		if code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
		wantBrokenProblems(t, errOut)
		if !strings.Contains(errOut, "refusing to start") {
			t.Errorf("stderr does not say serve refused to start:\n%s", errOut)
		}
		if strings.Contains(out, `"listening"`) {
			t.Errorf("serve logged that it was listening on a broken rule file:\n%s", out)
		}
	})

	t.Run("serve on a port in use exits 1", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		_, errOut, code := runCLI(t, "serve", "--config", ticketsConfig, "--upstream", "http://127.0.0.1:9",
			"--listen", ln.Addr().String(), "--admin", "127.0.0.1:0")
		if code != 1 || !strings.Contains(errOut, "cannot listen for agents on "+ln.Addr().String()) {
			t.Errorf("exit %d, stderr %q; want 1 and the address it could not listen on", code, errOut)
		}
	})

	t.Run("usage mistakes exit 2", func(t *testing.T) {
		t.Parallel()
		for _, args := range [][]string{
			{},
			{"serv"},
			{"check"},
			{"serve"},
			{"serve", "--config", ticketsConfig, "--upstream", "ftp://127.0.0.1:21", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"},
			{"serve", "--config", ticketsConfig, "--upstream", "http://127.0.0.1:9", "--listen", "127.0.0.1", "--admin", "127.0.0.1:0"},
		} {
			_, errOut, code := runCLI(t, args...)
			if code != 2 || errOut == "" {
				t.Errorf("signpost %q: exit %d, stderr %q; want 2 and a message", args, code, errOut)
			}
		}
		if _, errOut, _ := runCLI(t, "serv"); !strings.Contains(errOut, `did you mean "serve"`) {
			t.Errorf("signpost serv: stderr %q suggests nothing", errOut)
		}
	})

	t.Run("demo", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := runCLI(t, "demo")
		if code != 0 {
			t.Fatalf("exit %d, want 0; stderr:\n%s", code, errOut)
		}
		for _, want := range []string{
			`"error": "Invalid priority"`, // the legacy answer, indented
			`"error": "invalid_priority"`, // the rewritten one
			`"received": "urgent"`,
			`"message": "allowed values: p1, p2, p3"`,
			`signpost_rejections_total{code="invalid_priority",field="priority",route="create_ticket"} 1`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("demo output lacks %s:\n%s", want, out)
			}
		}
	})
}
