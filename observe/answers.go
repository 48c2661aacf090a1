package observe

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// Answer is what enforce mode would have sent for one upstream error on a
// route in observe mode, beside what the upstream sent: what an operator
// reads before switching the route to enforce.
type Answer struct {
	At        time.Time `json:"at"`
	Route     string    `json:"route"`
	RequestID string    `json:"request_id"`
	Method    string    `json:"method"`
	Path      string    `json:"path"`
	// Status is the upstream's status, which enforce keeps; zero when
	// enforce would have answered before calling the upstream.
	Status int    `json:"status"`
	Code   string `json:"code"`
	// Upstream is the upstream's body, masked and clipped as the logs
	// are; Would is the body enforce would have sent instead.
	Upstream string `json:"upstream_body"`
	Would    string `json:"would_answer"`
}

// Answers keeps the most recent would-be answers of each route, a bounded
// number per route, for the admin page.
type Answers struct {
	mu      sync.Mutex
	per     int
	byRoute map[string][]Answer // oldest first
}

// maxAnswerRoutes bounds the routes Answers keeps answers for: past it, a
// new route's answers replace them all. A rule file declares far fewer.
const maxAnswerRoutes = 1024

// NewAnswers keeps up to per answers for each route; zero means 5.
func NewAnswers(per int) *Answers {
	if per <= 0 {
		per = 5
	}
	return &Answers{per: per, byRoute: map[string][]Answer{}}
}

// answerEvery spaces the answers kept for one error of one route: a flood
// of it keeps, and makes the proxy build, no more answers than a page can
// show, and leaves room for the route's other errors.
const answerEvery = 250 * time.Millisecond

// Due reports whether an answer with code on route at time at is worth
// building: the route kept none with that code for answerEvery.
func (a *Answers) Due(route, code string, at time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	list := a.byRoute[route]
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Code == code {
			return at.Sub(list[i].At) >= answerEvery
		}
	}
	return true
}

// Add keeps a, forgetting the route's oldest answer past the bound.
func (a *Answers) Add(x Answer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	list, ok := a.byRoute[x.Route]
	if !ok && len(a.byRoute) >= maxAnswerRoutes {
		clear(a.byRoute)
	}
	if len(list) >= a.per {
		list = append(list[:0], list[1:]...)
	}
	a.byRoute[x.Route] = append(list, x)
}

// List returns the answers kept, by route name, most recent first.
func (a *Answers) List() []Answer {
	a.mu.Lock()
	out := make([]Answer, 0, len(a.byRoute)*a.per)
	for _, list := range a.byRoute {
		for i := len(list) - 1; i >= 0; i-- {
			out = append(out, list[i])
		}
	}
	a.mu.Unlock()
	slices.SortStableFunc(out, func(x, y Answer) int {
		return cmp.Or(cmp.Compare(x.Route, y.Route), y.At.Compare(x.At))
	})
	return out
}
