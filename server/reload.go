package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/signpost-proxy/signpost/admin"
	"github.com/signpost-proxy/signpost/metrics"
	"github.com/signpost-proxy/signpost/proxy"
	"github.com/signpost-proxy/signpost/rules"
)

// DefaultDebounce is how long the watcher waits after the last change in a
// burst before it reloads: editors and Kubernetes write a file in several
// steps, and the rules are read once they are done.
const DefaultDebounce = 100 * time.Millisecond

// Triggers of a reload, as the logs name them.
const (
	TriggerFile   = "file"   // a rule or catalog file changed
	TriggerSignal = "signal" // SIGHUP
	TriggerAdmin  = "admin"  // POST /-/reload on the admin listener
)

// reloader holds the proxy in force and swaps in a new one when the rules
// load cleanly: load, validate and compile, then one atomic store. A load
// that fails leaves the proxy in force alone. Requests load the current
// proxy once, on arrival, and finish under it.
type reloader struct {
	current atomic.Pointer[proxy.Proxy]
	status  atomic.Pointer[admin.ReloadStatus]

	load    func() (*rules.Config, error)
	build   func(*rules.Config) (*proxy.Proxy, error)
	metrics *metrics.Metrics
	log     *slog.Logger
	now     func() time.Time

	// listen and admin are the addresses the rules in force at start
	// asked for; fixed says a flag overrode them, so the file's do not
	// matter. learn is what the State was made with.
	listen, admin           string
	listenFixed, adminFixed bool
	learn                   rules.Learn

	// swapped is poked after each reload that took effect, so that the
	// watcher follows the files of the new rules.
	swapped chan struct{}

	mu sync.Mutex // serializes reloads; guards what follows
	// seen is the content hash of each file as the last attempt read it
	// just before loading, "" for a file it could not read.
	seen map[string]string
	// failed are the files the last failed attempt found problems in.
	failed []string
}

func newReloader(p *proxy.Proxy, load func() (*rules.Config, error), build func(*rules.Config) (*proxy.Proxy, error),
	m *metrics.Metrics, log *slog.Logger, now func() time.Time) *reloader {
	r := &reloader{load: load, build: build, metrics: m, log: log, now: now,
		listen: p.Config().Listen, admin: p.Config().Admin, learn: p.Config().Learn,
		swapped: make(chan struct{}, 1), seen: map[string]string{}}
	r.current.Store(p)
	r.status.Store(&admin.ReloadStatus{OK: true, Since: now()})
	for _, f := range p.Config().Files() {
		r.seen[f] = hashFile(f)
	}
	return r
}

// Proxy returns the proxy serving now.
func (r *reloader) Proxy() *proxy.Proxy { return r.current.Load() }

// Status returns the outcome of the last reload.
func (r *reloader) Status() admin.ReloadStatus { return *r.status.Load() }

// Reload re-reads the rule file and the catalogs it names, and swaps the
// new rules in if they load cleanly. It returns the problems of a load that
// failed, as rules.Problems. trigger names the cause in the logs.
func (r *reloader) Reload(trigger string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reload(trigger)
}

// reloadIfChanged reloads when the content of a file the rules came from
// differs from what the last attempt read: a change in a watched directory
// that concerns none of them, or that leaves a file as it was, does nothing.
func (r *reloader) reloadIfChanged() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.files() {
		if h, ok := r.seen[f]; !ok || h != hashFile(f) {
			_ = r.reload(TriggerFile)
			return
		}
	}
}

// files are those whose change may change the outcome of a load: those the
// rules in force came from, and those the last failed attempt blamed.
// r.mu must be held.
func (r *reloader) files() []string {
	files := r.current.Load().Config().Files()
	for _, f := range r.failed {
		if !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	return files
}

// reload does the work of Reload; r.mu must be held.
func (r *reloader) reload(trigger string) error {
	start := r.now()
	seen := map[string]string{}
	for _, f := range r.files() {
		seen[f] = hashFile(f)
	}
	r.seen = seen
	old := r.current.Load()
	cfg, err := r.load()
	var p *proxy.Proxy
	if err == nil {
		p, err = r.build(cfg)
	}
	if err != nil {
		return r.reject(trigger, start, old.Config().File, err)
	}
	r.failed = nil
	if r.metrics != nil {
		// The new rules' series exist before a request they serve counts.
		r.metrics.Declare(cfg)
	}
	r.current.Store(p)
	r.status.Store(&admin.ReloadStatus{At: start, OK: true, Since: start})
	if r.metrics != nil {
		r.metrics.Reloaded(true, float64(start.UnixNano())/1e9)
	}
	r.log.Info("rules reloaded", "trigger", trigger, "rules", cfg.File, "routes", len(cfg.Routes),
		"upstream", p.Upstream().String(), "took_ms", r.now().Sub(start).Milliseconds())
	r.restartOnly(cfg)
	select {
	case r.swapped <- struct{}{}:
	default:
	}
	return nil
}

// reject records a failed attempt: the rules in force stay. Each problem
// is logged on a line of its own, as check prints it, then one line sums
// them up. It returns the problems.
func (r *reloader) reject(trigger string, at time.Time, file string, err error) rules.Problems {
	var ps rules.Problems
	if !errors.As(err, &ps) {
		ps = rules.Problems{{File: file, Message: err.Error()}}
	}
	r.failed = r.failed[:0]
	for _, p := range ps {
		if !slices.Contains(r.failed, p.File) {
			r.failed = append(r.failed, p.File)
		}
	}
	prev := r.status.Load()
	r.status.Store(&admin.ReloadStatus{At: at, OK: false, Problems: ps, Since: prev.Since})
	if r.metrics != nil {
		r.metrics.Reloaded(false, 0)
	}
	for _, p := range ps {
		r.log.Error("rules problem", "problem", p.String())
	}
	n := "1 problem"
	if len(ps) != 1 {
		n = fmt.Sprintf("%d problems", len(ps))
	}
	r.log.Error("rules reload rejected", "trigger", trigger, "rules", file, "problems", len(ps),
		"detail", fmt.Sprintf("%s in %s; still serving the rules loaded at %s", n, file, prev.Since.Format(time.TimeOnly)),
		"took_ms", r.now().Sub(at).Milliseconds())
	return ps
}

// restartOnly warns about settings a reload cannot apply: the addresses
// already bound and the caller tracking the State was made with.
func (r *reloader) restartOnly(cfg *rules.Config) {
	if !r.listenFixed && cfg.Listen != r.listen {
		r.log.Warn("a new listen: address takes effect only on restart", "serving", r.listen, "rules", cfg.Listen)
	}
	if !r.adminFixed && cfg.Admin != r.admin {
		r.log.Warn("a new admin: address takes effect only on restart", "serving", r.admin, "rules", cfg.Admin)
	}
	if cfg.Learn != r.learn {
		r.log.Warn("new learn: settings take effect only on restart")
	}
}

// run reloads on each value from sig and, when watch is set, on a change
// to the files the rules came from, until ctx is done. It returns once its
// watcher is closed.
func (r *reloader) run(ctx context.Context, sig <-chan os.Signal, watch bool, debounce time.Duration) {
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	var w *watcher
	var events <-chan fsnotify.Event
	var errs <-chan error
	if watch {
		var err error
		if w, err = newWatcher(r.log); err != nil {
			r.log.Warn("cannot watch the rule files; reload with SIGHUP or POST /-/reload", "error", err.Error())
		} else {
			defer w.close()
			r.mu.Lock()
			w.follow(r.files())
			r.mu.Unlock()
			events, errs = w.fs.Events, w.fs.Errors
		}
	}
	// A burst of events is read once it has been quiet for debounce, or
	// at the latest ten debounces after it began.
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var burst time.Time // zero when no burst is under way
	for {
		select {
		case <-ctx.Done():
			return
		case s, ok := <-sig:
			if !ok {
				sig = nil
				continue
			}
			r.log.Info("reloading the rules", "trigger", TriggerSignal, "signal", s.String())
			_ = r.Reload(TriggerSignal)
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			now := time.Now()
			if burst.IsZero() {
				burst = now
			}
			timer.Reset(max(0, min(debounce, burst.Add(10*debounce).Sub(now))))
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			r.log.Warn("watching the rule files", "error", err.Error())
		case <-timer.C:
			burst = time.Time{}
			r.reloadIfChanged()
			if w != nil {
				r.mu.Lock()
				w.follow(r.files())
				r.mu.Unlock()
			}
		case <-r.swapped:
			if w != nil {
				r.mu.Lock()
				w.follow(r.files())
				r.mu.Unlock()
			}
		}
	}
}

// watcher watches the directories that hold the rule files, not the files:
// an editor that saves by renaming a new file over the old one, and a
// Kubernetes ConfigMap volume that swaps its ..data symlink, replace the
// file a watch on it would follow.
type watcher struct {
	fs   *fsnotify.Watcher
	dirs map[string]bool
	log  *slog.Logger
}

func newWatcher(log *slog.Logger) (*watcher, error) {
	fs, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	return &watcher{fs: fs, dirs: map[string]bool{}, log: log}, nil
}

// follow watches the directory of each file, and of the file a symlink
// leads to, and stops watching the directories no file is in any more.
func (w *watcher) follow(files []string) {
	want := map[string]bool{}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			continue
		}
		want[filepath.Dir(abs)] = true
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			want[filepath.Dir(real)] = true
		}
	}
	for d := range w.dirs {
		if !want[d] {
			_ = w.fs.Remove(d) // fails when the directory is gone, which is fine
			delete(w.dirs, d)
		}
	}
	for d := range want {
		if w.dirs[d] {
			continue
		}
		if err := w.fs.Add(d); err != nil {
			w.log.Warn("cannot watch a rule file directory; reload with SIGHUP or POST /-/reload", "dir", d, "error", err.Error())
			continue
		}
		w.dirs[d] = true
	}
}

func (w *watcher) close() { _ = w.fs.Close() }

// hashFile returns the SHA-256 of a file's first rules.MaxFileSize+1
// bytes, or "" when it cannot be read. That much decides what a load makes
// of the file, and no more is read: a huge file, or a symlink to an endless
// one such as /dev/zero, must not stall reloads or fill memory.
func hashFile(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, rules.MaxFileSize+1)); err != nil {
		return ""
	}
	return string(h.Sum(nil))
}
