// Package ticketapi is a legacy ticket API of the kind signpost is put in
// front of: it validates fail-fast and answers every mistake with a bare
// string such as {"error":"Invalid status"}. The demo and the end-to-end
// tests run it as their upstream.
package ticketapi

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Ticket is one support ticket.
type Ticket struct {
	ID         string `json:"ticket_id"`
	Title      string `json:"title"`
	Status     string `json:"status"`
	Priority   string `json:"priority"`
	CustomerID string `json:"customer_id"`
	Assignee   string `json:"assignee,omitempty"`
	DueAt      string `json:"due_at,omitempty"`
	UpdatedAt  string `json:"updated_at"`
}

// Customer is one customer tickets are raised for.
type Customer struct {
	ID   string `json:"customer_id"`
	Name string `json:"name"`
}

// API is an in-memory ticket service. Its zero value is not usable; call New.
type API struct {
	mu        sync.Mutex
	tickets   map[string]*Ticket
	customers []Customer
	next      int
	now       func() time.Time
}

var (
	statuses   = []string{"open", "pending", "closed"}
	priorities = []string{"p1", "p2", "p3"}
	assigneeRE = regexp.MustCompile(`^eng-[0-9]+$`)
)

// New returns an API holding two tickets, T-8841 (assigned) and T-8842
// (unassigned), and two customers, C-1042 and C-2001.
func New() *API {
	stamp := "2026-03-11T09:14:02Z"
	return &API{
		tickets: map[string]*Ticket{
			"T-8841": {ID: "T-8841", Title: "Export fails on large reports", Status: "open", Priority: "p2", CustomerID: "C-1042", Assignee: "eng-3", UpdatedAt: stamp},
			"T-8842": {ID: "T-8842", Title: "Password reset mail is late", Status: "open", Priority: "p3", CustomerID: "C-2001", UpdatedAt: stamp},
		},
		customers: []Customer{{ID: "C-1042", Name: "Acme Corp"}, {ID: "C-2001", Name: "Globex"}},
		next:      8843,
		now:       func() time.Time { return time.Date(2026, 3, 11, 9, 14, 2, 0, time.UTC) },
	}
}

// Handler returns the API's routes.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tickets/{id}", a.getTicket)
	mux.HandleFunc("PATCH /tickets/{id}", a.updateTicket)
	mux.HandleFunc("POST /tickets", a.createTicket)
	mux.HandleFunc("POST /tickets/{id}/assign", a.assignTicket)
	mux.HandleFunc("GET /customers", a.searchCustomers)
	return mux
}

func fail(w http.ResponseWriter, status int, msg string) {
	reply(w, status, map[string]string{"error": msg})
}

func reply(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(v); err != nil {
		fail(w, http.StatusBadRequest, "Bad request")
		return false
	}
	return true
}

func (a *API) getTicket(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.tickets[r.PathValue("id")]
	if !ok {
		fail(w, http.StatusNotFound, "No such ticket")
		return
	}
	reply(w, http.StatusOK, t)
}

func (a *API) updateTicket(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Status *string `json:"status"`
	}
	if !decode(w, r, &in) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.tickets[r.PathValue("id")]
	switch {
	case !ok:
		fail(w, http.StatusNotFound, "No such ticket")
	case in.Status == nil || !slices.Contains(statuses, *in.Status):
		fail(w, http.StatusBadRequest, "Invalid status")
	case *in.Status == "closed" && t.Assignee == "":
		fail(w, http.StatusConflict, "Cannot close ticket")
	default:
		t.Status = *in.Status
		t.UpdatedAt = a.now().Format(time.RFC3339)
		reply(w, http.StatusOK, t)
	}
}

func (a *API) createTicket(w http.ResponseWriter, r *http.Request) {
	var in Ticket
	if !decode(w, r, &in) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case strings.TrimSpace(in.Title) == "":
		fail(w, http.StatusBadRequest, "Missing title")
	case !slices.Contains(statuses, in.Status):
		fail(w, http.StatusBadRequest, "Invalid status")
	case !slices.Contains(priorities, in.Priority):
		fail(w, http.StatusBadRequest, "Invalid priority")
	case in.DueAt != "" && !isUTC(in.DueAt):
		fail(w, http.StatusBadRequest, "Invalid due date")
	case !slices.ContainsFunc(a.customers, func(c Customer) bool { return c.ID == in.CustomerID }):
		fail(w, http.StatusNotFound, "No such customer")
	default:
		t := in
		t.ID = "T-" + strconv.Itoa(a.next)
		a.next++
		t.Assignee = ""
		t.UpdatedAt = a.now().Format(time.RFC3339)
		a.tickets[t.ID] = &t
		reply(w, http.StatusCreated, &t)
	}
}

func (a *API) assignTicket(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Assignee string `json:"assignee"`
	}
	if !decode(w, r, &in) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.tickets[r.PathValue("id")]
	switch {
	case !ok:
		fail(w, http.StatusNotFound, "No such ticket")
	case !assigneeRE.MatchString(in.Assignee):
		fail(w, http.StatusBadRequest, "Invalid assignee")
	default:
		t.Assignee = in.Assignee
		t.UpdatedAt = a.now().Format(time.RFC3339)
		reply(w, http.StatusOK, t)
	}
}

// crashPage is what the API's web server answers when the search's SQL
// breaks: a quote in the query is pasted into it unescaped.
const crashPage = "<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head>\n" +
	"<body><h1>Internal Server Error</h1><p>SQLSTATE[42601]: syntax error at or near \"'\"</p></body></html>\n"

func (a *API) searchCustomers(w http.ResponseWriter, r *http.Request) {
	q := strings.ToLower(r.URL.Query().Get("query"))
	if strings.Contains(q, "'") {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(crashPage))
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	found := []Customer{}
	for _, c := range a.customers {
		if q != "" && (strings.Contains(strings.ToLower(c.Name), q) || strings.Contains(strings.ToLower(c.ID), q)) {
			found = append(found, c)
		}
	}
	reply(w, http.StatusOK, map[string]any{"customers": found})
}

func isUTC(s string) bool {
	_, err := time.Parse(time.RFC3339, s)
	return err == nil && strings.HasSuffix(s, "Z")
}
