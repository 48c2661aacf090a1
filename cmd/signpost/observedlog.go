package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/signpost-proxy/signpost/observe"
)

// observedMsg is the message of the lines in which serve and mcp write, as
// they exit, what observe mode recorded: one line per operation, so that
// signpost draft --from reads it back from the JSON logs of every process
// that observed, after they are gone.
const observedMsg = "observed operation"

// observedLine is one such line. Time, level and message come first, as
// in every other line of the JSON log.
type observedLine struct {
	Time  time.Time `json:"time"`
	Level string    `json:"level"`
	Msg   string    `json:"msg"`
	// Observer names the process, so that the lines of several replicas
	// in one log are told apart: host, process id and start.
	Observer       string            `json:"observer"`
	Version        int               `json:"version"`
	Since          time.Time         `json:"since"`
	RecoveryWindow string            `json:"recovery_window"`
	Dropped        observe.Dropped   `json:"dropped"`
	Operation      observe.Operation `json:"operation"`
}

// processName names this process among the replicas whose logs draft
// merges.
var processName = func() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%d", host, os.Getpid(), time.Now().UnixNano())
}()

// logObserved writes what rec recorded to w as observed lines, one per
// operation; nothing when it recorded nothing. It writes past the log's
// buffer, once that is closed: the lines are long, and none may be lost.
func logObserved(w io.Writer, rec *observe.Record) error {
	doc := rec.Document()
	if len(doc.Operations) == 0 {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	now := time.Now()
	for _, op := range doc.Operations {
		line := observedLine{Time: now, Level: "INFO", Msg: observedMsg, Observer: processName, Version: doc.Version,
			Since: doc.Since, RecoveryWindow: doc.RecoveryWindow, Dropped: doc.Dropped, Operation: op}
		if err := enc.Encode(&line); err != nil {
			return err
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// maxObservedLine bounds one line of a log draft reads; longer lines are
// skipped, as no observed line comes near it.
const maxObservedLine = 16 << 20

// documentsFromLog reads the observed lines of a JSON log, skipping every
// other line, and returns one document per process that wrote them, in
// the order first seen.
func documentsFromLog(r *bufio.Reader, where string) ([]observe.Document, error) {
	byObserver := map[string]*observe.Document{}
	var order []string
	key := []byte(`"msg":"` + observedMsg + `"`)
	for n := 1; ; n++ {
		line, err := readLine(r)
		if len(line) > 0 && bytes.Contains(line, key) {
			var l observedLine
			if jerr := json.Unmarshal(line, &l); jerr != nil {
				return nil, fmt.Errorf("%s:%d: an observed line that is not JSON: %v", where, n, jerr)
			}
			if l.Version != observe.DocumentVersion {
				return nil, fmt.Errorf("%s:%d: an observed line of version %d; this signpost reads version %d, from a signpost of the same release", where, n, l.Version, observe.DocumentVersion)
			}
			d, ok := byObserver[l.Observer]
			if !ok {
				d = &observe.Document{Version: l.Version, Since: l.Since, RecoveryWindow: l.RecoveryWindow, Dropped: l.Dropped, Operations: []observe.Operation{}}
				byObserver[l.Observer] = d
				order = append(order, l.Observer)
			}
			d.Operations = append(d.Operations, l.Operation)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", where, err)
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%s holds no %q line: signpost writes them to its JSON log as it exits, when a route observes", where, observedMsg)
	}
	docs := make([]observe.Document, 0, len(order))
	for _, o := range order {
		docs = append(docs, *byObserver[o])
	}
	return slices.Clip(docs), nil
}

// readLine returns the next line of r without its end, or an empty one in
// place of a line longer than maxObservedLine, which is read past.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	skip := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !skip {
			if len(line)+len(chunk) > maxObservedLine {
				skip, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

// isLogLine reports whether line is a line of signpost's JSON log, rather
// than the first line of a document from GET /draft.
func isLogLine(line []byte) bool {
	var l struct {
		Msg *string `json:"msg"`
	}
	return json.Unmarshal(line, &l) == nil && l.Msg != nil
}
