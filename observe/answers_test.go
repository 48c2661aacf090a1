package observe

import (
	"fmt"
	"testing"
	"time"
)

func TestAnswersKeepTheLatestPerRoute(t *testing.T) {
	a := NewAnswers(2)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := range 5 {
		a.Add(Answer{At: t0.Add(time.Duration(i) * time.Second), Route: "update_ticket", Code: fmt.Sprint("c", i)})
	}
	a.Add(Answer{At: t0, Route: "get_ticket", Code: "g"})
	var got []string
	for _, x := range a.List() {
		got = append(got, x.Route+"/"+x.Code)
	}
	want := []string{"get_ticket/g", "update_ticket/c4", "update_ticket/c3"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("List() = %v, want %v", got, want)
	}
}

func TestAnswersBoundTheRoutes(t *testing.T) {
	a := NewAnswers(1)
	for i := range maxAnswerRoutes + 10 {
		a.Add(Answer{Route: fmt.Sprint("r", i)})
	}
	if n := len(a.List()); n > maxAnswerRoutes {
		t.Errorf("%d answers kept, want at most %d", n, maxAnswerRoutes)
	}
}

func TestAnswersDue(t *testing.T) {
	a := NewAnswers(5)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if !a.Due("r", "c", t0) {
		t.Fatal("a route with no answer is not due")
	}
	a.Add(Answer{At: t0, Route: "r", Code: "c"})
	for _, tt := range []struct {
		after time.Duration
		want  bool
	}{{0, false}, {answerEvery / 2, false}, {answerEvery, true}, {time.Hour, true}} {
		if got := a.Due("r", "c", t0.Add(tt.after)); got != tt.want {
			t.Errorf("Due %v after the last answer = %v, want %v", tt.after, got, tt.want)
		}
	}
	if !a.Due("r", "other_code", t0) || !a.Due("other_route", "c", t0) {
		t.Error("an answer made another error, or another route's, wait")
	}
}
