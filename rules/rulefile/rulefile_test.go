package rulefile

import (
	"testing"

	"gopkg.in/yaml.v3"
)

func TestWriter(t *testing.T) {
	var w Writer
	w.Comment(0, "Starter rules\nfor an API")
	w.Line(0, "routes:")
	w.Line(2, "get_pet:")
	w.Linef(4, "path: %s", BlockScalar("/pet/{petId}"))
	w.Inactive(4, "retryable: true")
	w.Comment(4, "a value with a line break\r inside, and a NUL \x00 too")
	w.Blank()
	want := "# Starter rules\n# for an API\nroutes:\n  get_pet:\n    path: /pet/{petId}\n    # retryable: true\n" +
		"    # a value with a line break  inside, and a NUL   too\n\n"
	if got := string(w.Bytes()); got != want {
		t.Errorf("wrote\n%s\nwant\n%s", got, want)
	}
	var v map[string]map[string]map[string]string
	if err := yaml.Unmarshal(w.Bytes(), &v); err != nil || v["routes"]["get_pet"]["path"] != "/pet/{petId}" || len(v["routes"]["get_pet"]) != 1 {
		t.Errorf("the file reads as %v, %v", v, err)
	}
}
