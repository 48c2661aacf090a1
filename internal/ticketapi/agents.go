package ticketapi

import (
	"fmt"
	"net/url"
)

// Call is one call of the scripted agents: who sends it (its
// X-Session-Id), and what.
type Call struct {
	Caller, Method, Path, Body string
}

// Agents is what four agents do against a fresh API with no rules to
// guide them: wrong values first (an enum's synonym, a date with no time,
// an id without its prefix, a close before the assign it needs, a quote
// that crashes the search), then the values that work. Each agent keeps
// to the ticket it creates first, T-8843 and on, three apart: replayed on a
// fresh API, the script gets the same answers every time.
func Agents() []Call {
	var script []Call
	titles := []string{"Printer on fire", "Export fails on large reports", "VPN drops at noon", "Login page is slow"}
	customers := []string{"C-1042", "C-2001", "C-1042", "C-2001"}
	statusGuess := []string{"active", "active", "active", "Opened"}
	priorityGuess := []string{"urgent", "urgent", "urgent", "high"}
	later := []string{"p2", "p3", "p2", "p3"}
	last := []string{"p3", "p2", "p3", "p2"}
	for i := range 4 {
		who := fmt.Sprintf("agent-%d", i+1)
		own := fmt.Sprintf("/tickets/T-%d", 8843+3*i)
		ticket := func(title, priority, due string) string {
			body := fmt.Sprintf(`{"title":%q,"status":"open","priority":%q,"customer_id":%q`, title, priority, customers[i])
			if due != "" {
				body += fmt.Sprintf(`,"due_at":%q`, due)
			}
			return body + "}"
		}
		script = append(script,
			// A ticket of its own: a priority the API does not know, then p1.
			Call{who, "POST", "/tickets", ticket(titles[i], priorityGuess[i], "")},
			Call{who, "POST", "/tickets", ticket(titles[i], "p1", "")},
			// A follow-up due by a date without its time, then in RFC 3339, in UTC.
			Call{who, "POST", "/tickets", ticket(titles[(i+1)%4]+", again", later[i], "2026-12-24")},
			Call{who, "POST", "/tickets", ticket(titles[(i+1)%4]+", again", later[i], "2026-12-24T17:00:00Z")},
			// One more, right the first time.
			Call{who, "POST", "/tickets", ticket(titles[(i+2)%4]+", once more", last[i], "")},
			// A ticket id without its prefix, then with it.
			Call{who, "GET", "/tickets/8841", ""},
			Call{who, "GET", "/tickets/T-8841", ""},
			Call{who, "GET", own, ""},
			// A status the API does not take, then the ones it does.
			Call{who, "PATCH", own, fmt.Sprintf(`{"status":%q}`, statusGuess[i])},
			Call{who, "PATCH", own, `{"status":"open"}`},
			Call{who, "PATCH", own, `{"status":"pending"}`},
			// Closing needs an assignee: the 409, the assign, the close.
			Call{who, "PATCH", own, `{"status":"closed"}`},
			Call{who, "POST", own + "/assign", `{"assignee":"eng-3"}`},
			Call{who, "PATCH", own, `{"status":"closed"}`},
			// A quote breaks the search's SQL: an HTML 500.
			Call{who, "GET", "/customers?query=" + url.QueryEscape("O'Brien"), ""},
			Call{who, "GET", "/customers?query=Acme", ""},
		)
	}
	return script
}
