// Command upstream is the benchmark's stand-in for a legacy API: it answers
// fast, from memory, with the bare errors signpost exists to rewrite.
//
//	GET   /tickets/{id}  200, a small JSON ticket
//	GET   /big           200, a 64 KiB JSON body
//	GET   /huge          200, a 1 MiB JSON body
//	PATCH /tickets/{id}  400 {"error":"Invalid status"} unless status is open, pending or closed; else 200
//	PATCH /tickets/T-2   200 whatever the status: the wrong call, byte for byte but the id, answered 200
//	POST  /tickets       400 {"error":"Invalid status"} unless status is open, pending or closed; else 201
//
// It is run by test/bench/run.sh and listens on loopback only.
package main

import (
	"flag"
	"io"
	"log"
	"net/http"
	"strconv"
	"time"

	"github.com/tidwall/gjson"
)

var (
	ticket        = []byte(`{"id":"T-1","title":"Printer on fire","status":"open","priority":"p2","customer_id":"C-1042"}`)
	invalidStatus = []byte(`{"error":"Invalid status"}`)
	big           = bigBody(64 << 10)
	huge          = bigBody(1 << 20)
)

// bigBody returns a JSON document of exactly n bytes.
func bigBody(n int) []byte {
	b := make([]byte, 0, n)
	b = append(b, `{"data":"`...)
	for len(b) < n-2 {
		b = append(b, 'a'+byte(len(b)%26))
	}
	return append(b, `"}`...)
}

func write(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// validStatus reports whether the request body holds a status the API
// accepts. gjson finds it without decoding the body, so that the stand-in
// spends as little as it can of the CPU it shares with the proxy.
func validStatus(r *http.Request) bool {
	var body []byte
	var err error
	if n := r.ContentLength; n >= 0 && n <= 1<<20 {
		// The usual case: one read of the declared length.
		body = make([]byte, n)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(io.LimitReader(r.Body, 1<<20))
	}
	if err != nil {
		return false
	}
	switch gjson.GetBytes(body, "status").String() {
	case "open", "pending", "closed":
		return true
	}
	return false
}

func main() {
	addr := flag.String("listen", "127.0.0.1:18101", "`address` to listen on")
	flag.Parse()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /tickets/{id}", func(w http.ResponseWriter, r *http.Request) {
		write(w, http.StatusOK, ticket)
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		write(w, http.StatusOK, big)
	})
	mux.HandleFunc("GET /huge", func(w http.ResponseWriter, r *http.Request) {
		write(w, http.StatusOK, huge)
	})
	mux.HandleFunc("PATCH /tickets/{id}", func(w http.ResponseWriter, r *http.Request) {
		// T-2 takes any status, so that a proxy can be measured passing
		// the wrong call's 200 through: the same route, the same size,
		// and the same reading of the body here.
		if !validStatus(r) && r.PathValue("id") != "T-2" {
			write(w, http.StatusBadRequest, invalidStatus)
			return
		}
		write(w, http.StatusOK, ticket)
	})
	mux.HandleFunc("POST /tickets", func(w http.ResponseWriter, r *http.Request) {
		if !validStatus(r) {
			write(w, http.StatusBadRequest, invalidStatus)
			return
		}
		write(w, http.StatusCreated, ticket)
	})

	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
