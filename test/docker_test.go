package test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signpost-proxy/signpost/internal/ticketapi"
)

// Bounds of the sidecar test: the whole of it, images included, and each
// wait for the containers to reach a state.
const (
	dockerTimeout  = 4 * time.Minute
	cleanupTimeout = time.Minute
	stateTimeout   = 30 * time.Second
)

// composeFile is the Compose project docs/sidecar.md documents, relative to
// the module root.
const composeFile = "deploy/compose/docker-compose.yml"

// sidecarPage is the page that shows composeFile, relative to the module
// root.
const sidecarPage = "docs/sidecar.md"

// TestComposeFileInDocs checks that the Compose project sidecarPage shows is
// composeFile byte for byte: of the page's YAML blocks, exactly one declares
// services, and it is the file. It needs no Docker.
func TestComposeFileInDocs(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile(filepath.Join("..", composeFile))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join("..", sidecarPage))
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, b := range fencedBlocks(string(page), "yaml") {
		if strings.HasPrefix(b, "services:\n") || strings.Contains(b, "\nservices:\n") {
			shown = append(shown, b)
		}
	}
	if len(shown) != 1 {
		t.Fatalf("%s has %d YAML blocks that declare services; want exactly one, %s whole", sidecarPage, len(shown), composeFile)
	}
	if shown[0] == string(want) {
		return
	}
	got, wantLines := strings.Split(shown[0], "\n"), strings.Split(string(want), "\n")
	for i := range max(len(got), len(wantLines)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(wantLines) {
			w = wantLines[i]
		}
		if g != w {
			t.Fatalf("%s shows %s otherwise than it is; from line %d of the file:\n  page: %q\n  file: %q\ncopy the file into the page whole", sidecarPage, composeFile, i+1, g, w)
		}
	}
	t.Fatalf("%s shows %s with other line ends than the file's", sidecarPage, composeFile)
}

// TestDockerSidecar builds the images with deploy/build.sh, brings up the
// Compose project under a name of its own, and checks through the published
// port what an agent sees: a rewritten error, a success passed on byte for
// byte, a rule reload by SIGHUP, a structured 502 while the legacy container
// is killed, and recovery once it is started again. Without a Docker engine
// it is skipped, except under CI.
func TestDockerSidecar(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), dockerTimeout)
	defer cancel()
	d := newDocker(t, ctx)
	tag := "e2e-" + d.id

	rulesDir, err := os.MkdirTemp("", "signpost-rules-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rulesDir) })
	// The container runs as an unprivileged user: it must read the copy.
	if err := os.Chmod(rulesDir, 0o755); err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile(ticketsConfig)
	if err != nil {
		t.Fatal(err)
	}
	writeRules(t, rulesDir, rules)
	d.env = []string{"SIGNPOST_TAG=" + tag, "SIGNPOST_RULES=" + rulesDir, "SIGNPOST_PORT="}

	// Cleanups run last first: logs if the test failed, then the project,
	// then the images.
	images := []string{"signpost:" + tag, "signpost-ticketapi:" + tag, "signpost-pause:" + tag}
	t.Cleanup(func() { d.cleanup(t, append([]string{"docker", "rmi", "--force"}, images...)...) })
	t.Cleanup(func() { d.cleanup(t, d.compose("down", "--volumes", "--remove-orphans", "--timeout", "5")...) })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("compose logs:\n%s", d.cleanup(t, d.compose("logs", "--no-color")...))
		}
	})

	start := time.Now()
	t.Logf("deploy/build.sh %s:\n%s", tag, d.run(t, "deploy/build.sh", tag))
	t.Logf("%s\nbuilt in %v", d.run(t, "docker", "image", "ls", "--filter", "reference=signpost*:"+tag), time.Since(start).Round(time.Second))

	start = time.Now()
	d.run(t, d.compose("up", "--detach")...)
	addr := lastLine(d.run(t, d.compose("port", "pod", "8080")...))
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("signpost's port is published on %q, want 127.0.0.1 only", addr)
	}
	url := "http://" + addr
	legacy := lastLine(d.run(t, d.compose("ps", "-q", "legacy")...))
	sidecar := lastLine(d.run(t, d.compose("ps", "-q", "signpost")...))
	// `signpost healthcheck --ready` inside the image: rules loaded and
	// the legacy API reachable over the shared loopback.
	d.waitState(t, sidecar, "{{.State.Health.Status}}", "healthy")
	t.Logf("up and healthy in %v, signpost on %s", time.Since(start).Round(time.Second), addr)

	api := newUpstream(t, ticketapi.New().Handler())
	// Each wrong call comes from a caller of its own: the same caller
	// sending it again would be told the value was already rejected.
	const wrongStatus = `{"status":"OPEN"}`
	t.Run("rewritten error", func(t *testing.T) {
		wantJSONError(t, send(t, "PATCH", url+"/tickets/T-8841", []byte(wrongStatus), "X-Session-Id", "first-call"), http.StatusBadRequest,
			`{"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}`)
	})
	t.Run("success byte for byte", func(t *testing.T) {
		wantSame(t, send(t, "GET", url+"/tickets/T-8841", nil), send(t, "GET", api.URL+"/tickets/T-8841", nil))
	})

	reloaded := `{"error":"invalid_status","field":"status","message":"must be lower case: open, pending or closed","received":"OPEN","did_you_mean":["open"],"retryable":false}`
	t.Run("reload on SIGHUP", func(t *testing.T) {
		// The field's rule: a value that breaks it is answered with it,
		// whatever the matching error rule says.
		const field = "status: {enum: [open, pending, closed]}"
		if !bytes.Contains(rules, []byte(field)) {
			t.Fatalf("%s has no field %q to change", ticketsConfig, field)
		}
		writeRules(t, rulesDir, bytes.Replace(rules, []byte(field),
			[]byte("status: {enum: [open, pending, closed], list_tokens: 0, rule: 'must be lower case: open, pending or closed'}"), 1))
		d.run(t, d.compose("kill", "-s", "HUP", "signpost")...)
		var outcome logLine
		eventually(t, "reload log line with trigger signal", func() bool {
			outcome = d.logged(t, sidecar, func(l logLine) bool {
				return (l["msg"] == "rules reloaded" || l["msg"] == "rules reload rejected") && l["trigger"] == "signal"
			})
			return outcome != nil
		})
		if outcome["msg"] != "rules reloaded" {
			t.Fatalf("SIGHUP did not reload the rules: %v", outcome)
		}
		wantJSONError(t, send(t, "PATCH", url+"/tickets/T-8841", []byte(wrongStatus), "X-Session-Id", "after-reload"), http.StatusBadRequest, reloaded)
	})

	t.Run("legacy killed, then started", func(t *testing.T) {
		d.run(t, "docker", "kill", legacy)
		d.waitState(t, legacy, "{{.State.Status}}", "exited")
		wantJSONError(t, send(t, "GET", url+"/tickets/T-8841", nil), http.StatusBadGateway,
			`{"error":"upstream_unavailable","message":"the upstream service could not be reached; the call did not take effect, retry it shortly","retryable":true}`)

		d.run(t, "docker", "start", legacy)
		eventually(t, "a 200 through signpost after the legacy container started", func() bool {
			r, err := try("GET", url+"/tickets/T-8841")
			return err == nil && r.status == http.StatusOK
		})
		wantSame(t, send(t, "GET", url+"/tickets/T-8841", nil), send(t, "GET", api.URL+"/tickets/T-8841", nil))
		wantJSONError(t, send(t, "PATCH", url+"/tickets/T-8841", []byte(wrongStatus), "X-Session-Id", "after-restart"), http.StatusBadRequest, reloaded)
	})
}

// docker runs the docker and Compose commands of one test, from the module
// root, each bounded by the test's context.
type docker struct {
	ctx     context.Context
	id      string                        // names this run's Compose project and image tag
	compose func(args ...string) []string // the Compose command line for args
	env     []string                      // added to the environment of every command
}

// newDocker finds the Docker engine and a Compose tool, docker compose or
// docker-compose, whichever runs. Without an engine the test is skipped,
// except under CI, whose machines have one.
func newDocker(t *testing.T, ctx context.Context) *docker {
	t.Helper()
	d := &docker{ctx: ctx, id: randomHex(t)}
	skip := func(why string) {
		if os.Getenv("CI") != "" {
			t.Fatal(why + "; CI is set, and CI machines run a Docker engine with Compose")
		}
		t.Skip(why)
	}
	version, err := d.output(10*time.Second, "docker", "version", "--format", "{{.Server.Version}}")
	if err != nil {
		why := lastLine(version) // the client's own words, last
		if why == "" {
			why = errors.Unwrap(err).Error()
		}
		skip("no Docker engine answers (docker version: " + why + "); the sidecar test needs one")
	}
	for _, c := range [][]string{{"docker", "compose"}, {"docker-compose"}} {
		if _, err := d.output(30*time.Second, append(c, "version")...); err == nil {
			project := "signpost-e2e-" + d.id
			d.compose = func(args ...string) []string {
				return append(append(c[:len(c):len(c)], "--file", composeFile, "--project-name", project), args...)
			}
			t.Logf("Docker engine %s, Compose tool %q", lastLine(version), strings.Join(c, " "))
			return d
		}
	}
	skip("the Docker engine " + lastLine(version) + " answers, but neither docker compose nor docker-compose runs; the sidecar test needs one")
	return nil
}

// output runs args within d and returns what they printed, or an error
// that holds it.
func (d *docker) output(within time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(d.ctx, within)
	defer cancel()
	return d.exec(ctx, args...)
}

func (d *docker) exec(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), d.env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// run runs args and fails the test if they fail.
func (d *docker) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := d.exec(d.ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cleanup runs args with a bound of their own, since the test's may have
// passed, and reports a failure without stopping the other cleanups.
func (d *docker) cleanup(t *testing.T, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	out, err := d.exec(ctx, args...)
	if err != nil {
		t.Errorf("cleanup: %v", err)
	}
	return out
}

// waitState waits until docker inspect's format of container reads want.
func (d *docker) waitState(t *testing.T, container, format, want string) {
	t.Helper()
	eventually(t, fmt.Sprintf("container %.12s with %s = %q", container, format, want), func() bool {
		out, err := d.output(10*time.Second, "docker", "inspect", "--format", format, container)
		return err == nil && strings.TrimSpace(out) == want
	})
}

// logged returns the first JSON line the container has logged for which ok
// holds, or nil.
func (d *docker) logged(t *testing.T, container string, ok func(logLine) bool) logLine {
	out, err := d.output(10*time.Second, "docker", "logs", container)
	if err != nil {
		t.Log(err)
		return nil
	}
	for _, l := range strings.Split(out, "\n") {
		var line logLine
		if json.Unmarshal([]byte(l), &line) == nil && ok(line) {
			return line
		}
	}
	return nil
}

// eventually polls cond until it holds, and fails the test if it does not
// within stateTimeout.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(stateTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, stateTimeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// try sends a request without failing the test, for polls that expect
// errors until the containers are up.
func try(method, url string) (*reply, error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return nil, err
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return &reply{status: res.StatusCode, header: res.Header, body: body}, err
}

// writeRules replaces dir/tickets.yaml with b at once, by renaming, so that
// signpost never reads half a file, and leaves it readable to all.
func writeRules(t *testing.T, dir string, b []byte) {
	t.Helper()
	tmp := filepath.Join(dir, ".tickets.yaml.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(os.Chmod(tmp, 0o644), os.Rename(tmp, filepath.Join(dir, "tickets.yaml"))); err != nil {
		t.Fatal(err)
	}
}

func randomHex(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
