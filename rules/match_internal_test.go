package rules

import "testing"

func TestStatusSet(t *testing.T) {
	class := func(base int) []int {
		var s []int
		for st := base; st < base+100; st++ {
			s = append(s, st)
		}
		return s
	}
	tests := []struct {
		statuses []int
		want     string
	}{
		{nil, ""},
		{[]int{400}, "400"},
		{[]int{599}, "599"},
		{[]int{404, 400, 422}, "400, 404, 422"},
		{class(400), "4xx"},
		{append(class(400), 503), "4xx, 503"},
		{append([]int{404}, class(500)...), "404, 5xx"},
		{append(class(400), class(500)...), "4xx, 5xx"},
		{class(400)[1:], "401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 419, 420, 421, 422, 423, 424, 425, 426, 427, 428, 429, 430, 431, 432, 433, 434, 435, 436, 437, 438, 439, 440, 441, 442, 443, 444, 445, 446, 447, 448, 449, 450, 451, 452, 453, 454, 455, 456, 457, 458, 459, 460, 461, 462, 463, 464, 465, 466, 467, 468, 469, 470, 471, 472, 473, 474, 475, 476, 477, 478, 479, 480, 481, 482, 483, 484, 485, 486, 487, 488, 489, 490, 491, 492, 493, 494, 495, 496, 497, 498, 499"},
	}
	for _, tt := range tests {
		var s statusSet
		for _, st := range tt.statuses {
			s.add(st)
		}
		if got := s.String(); got != tt.want {
			t.Errorf("String() of %v = %q, want %q", tt.statuses, got, tt.want)
		}
		for _, st := range tt.statuses {
			if !s.has(st) {
				t.Errorf("set of %v lacks %d", tt.statuses, st)
			}
		}
	}

	var s statusSet
	s.add(400)
	s.add(599)
	for _, st := range []int{-1, 0, 200, 399, 401, 598, 600, 1000} {
		if s.has(st) {
			t.Errorf("{400, 599} has %d", st)
		}
	}
	var u statusSet
	u.union(s)
	u.add(503)
	if got := u.String(); got != "400, 503, 599" {
		t.Errorf("union = %q", got)
	}
	if got := s.String(); got != "400, 599" {
		t.Errorf("union changed its argument: %q", got)
	}
}
