package adoption

import (
	"strings"
	"testing"
)

var (
	stepSteps = []string{"45s", "45", "2m30s", "0.25", "3h", "1d"}
	times     = []string{"2026-11-02T08:30:00Z", "1762072200", "1762072200.5"}
)

func rangeMistake(step string) Mistake {
	return Mistake{Name: "bad step", Method: "GET", Path: "/api/v1/query_range?query=up&start=1&end=2&step=" + step,
		Fault: []string{"step"},
		Parts: []Part{{Name: "query", In: "query", Value: "up", Valid: []string{"vector(1)"}},
			{Name: "start", In: "query", Value: "1", Valid: times}, {Name: "end", In: "query", Value: "2", Valid: times},
			{Name: "step", In: "query", Value: step, Valid: stepSteps}}}
}

const promStep = `{"status":"error","errorType":"bad_data","error":"invalid parameter \"step\": cannot parse \"90sec\" to a valid duration"}`

func mustRules(t *testing.T, text string) *Rules {
	t.Helper()
	r, err := ParseRules([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestJudge(t *testing.T) {
	rangeRules := mustRules(t, `
routes:
  get_query_range:
    method: GET
    path: /api/v1/query_range
    fields:
      step: {pattern: '^([0-9]+[smhdwy])+$|^[0-9.]+$', example: 15s}
      time: {format: integer}
      query: {enum: [up, go_goroutines]}
`)
	registry := mustRules(t, `
routes:
  get_manifest:
    method: GET
    path: '/v2/{name:.+}/manifests/{reference}'
`)
	manifest := Mistake{Name: "unknown tag", Method: "GET", Path: "/v2/qa/nightly/manifests/nope", Fault: []string{"reference"},
		Parts: []Part{{Name: "name", In: "path", Value: "qa/nightly", Valid: []string{"solo"}},
			{Name: "reference", In: "path", Value: "nope", Valid: []string{"latest", "v1.2.3"}, Aliases: []string{"tag"}}}}
	method := Mistake{Name: "PATCH", Method: "PATCH", Path: "/api/v1/series?match[]=up"}
	bareStep := &Answer{400, []byte(promStep)}
	tests := []struct {
		name  string
		m     Mistake
		rules *Rules
		got   string
		bare  *Answer
		want  Verdict
		why   string // in the reasons
		kept  bool
		// status is the status the body came with.
		status int
	}{
		{"the bare API names the parameter and the kind", rangeMistake("90sec"), nil, promStep, nil, Actionable, "names step", true, 400},
		{"the upstream's words quoted", rangeMistake("90sec"), rangeRules,
			`{"error":"upstream_rejected","message":"the upstream rejected the call","upstream_code":"bad_data","upstream_message":"invalid parameter \"step\": cannot parse \"90sec\" to a valid duration"}`,
			bareStep, Actionable, "names step", true, 400},
		{"a generic body", rangeMistake("90sec"), rangeRules,
			`{"error":"upstream_rejected","message":"the upstream rejected the call (400 Bad Request)","upstream_code":"bad_data","retryable":false}`,
			bareStep, Not, "no field", false, 400},
		{"a field that was right", rangeMistake("90sec"), rangeRules,
			`{"error":"invalid_query","field":"query","message":"invalid parameter \"step\": cannot parse \"90sec\" to a valid duration","upstream_code":"bad_data"}`,
			bareStep, False, `blames "query"`, true, 400},
		{"an enum a valid value breaks", rangeMistake("90sec"), rangeRules,
			`{"error":"invalid_step","field":"step","message":"allowed values: 15s, 30s, 60s","received":"90sec"}`,
			bareStep, False, `the API accepts step "45s"`, false, 400},
		{"a format a valid value breaks", Mistake{Name: "time", Method: "GET", Path: "/api/v1/query_range?time=x", Fault: []string{"time"},
			Parts: []Part{{Name: "time", In: "query", Value: "x", Valid: times}}}, rangeRules,
			`{"error":"invalid_time","field":"time","message":"must be an integer, e.g. 42","received":"x"}`,
			&Answer{400, []byte(`{"status":"error","errorType":"bad_data","error":"invalid parameter \"time\": cannot parse \"x\" to a valid timestamp"}`)},
			False, "the format integer", false, 400},
		{"a truer statement", rangeMistake("90sec"), rangeRules,
			`{"error":"invalid_step","field":"step","message":"must be a duration such as 15s or 1m30s, e.g. 15s","received":"90sec"}`,
			bareStep, Actionable, "names step", true, 400},
		{"a path variable at fault", manifest, registry,
			`{"error":"manifest_unknown","field":"reference","message":"no manifest has this tag; list the tags first, e.g. latest","upstream_code":"MANIFEST_UNKNOWN","upstream_message":"manifest unknown"}`,
			&Answer{404, []byte(`{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{"Tag":"nope"}}]}`)},
			Actionable, "names reference", true, 400},
		{"a path variable that was right", manifest, registry,
			`{"error":"manifest_unknown","field":"name","message":"manifest unknown","upstream_code":"MANIFEST_UNKNOWN"}`,
			&Answer{404, []byte(`{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{"Tag":"nope"}}]}`)},
			False, `blames "name" (the path name "qa/nightly")`, true, 400},
		{"a wrong method, the bare API", method, nil, "Method Not Allowed\n", nil, Not, "no word beyond its status", true, 405},
		{"a wrong method, the methods allowed", method, rangeRules,
			`{"error":"upstream_rejected","message":"no declared route takes this method on this path (405 Method Not Allowed); the upstream allows GET, POST","upstream_message":"Method Not Allowed"}`,
			&Answer{405, []byte("Method Not Allowed\n")}, Actionable, "allows GET", true, 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Judge(tt.m, tt.rules, Answer{tt.status, []byte(tt.got)}, tt.bare)
			if got.Verdict != tt.want || !strings.Contains(got.Why, tt.why) {
				t.Errorf("Judge = %v (%s), want %v with %q", got.Verdict, got.Why, tt.want, tt.why)
			}
			if tt.bare == nil {
				return
			}
			if kept, why := Kept(tt.m, tt.rules, *tt.bare, Answer{tt.status, []byte(tt.got)}); kept != tt.kept {
				t.Errorf("Kept = %v (%s), want %v", kept, why, tt.kept)
			}
		})
	}
}
