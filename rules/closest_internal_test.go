package rules

import "testing"

func TestClosestName(t *testing.T) {
	formats := formatNames()
	for _, tc := range []struct{ in, want string }{
		{"interger", "integer"},      // edit distance
		{"rfc3339-u", "rfc3339-utc"}, // abbreviation
		{"RFC3339-U", "rfc3339-utc"}, // abbreviation, any case
		{"RFC3339", "rfc3339"},       // any case
		{"da", ""},                   // too short to abbreviate anything
		{"datetime", ""},             // neither
	} {
		if got := closestName(tc.in, formats); got != tc.want {
			t.Errorf("closestName(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
	// An abbreviation of two options suggests neither.
	if got := closestName("max", []string{"max_length", "max_errors"}); got != "" {
		t.Errorf("ambiguous abbreviation suggested %q", got)
	}
}
