package observe

import (
	"slices"
	"testing"
)

// TestInferShape reads paths as templates: identifiers become variables
// named after the collection before them.
func TestInferShape(t *testing.T) {
	for _, tc := range []struct {
		path, want string
		vals       []string
	}{
		{"/tickets/T-1041", "/tickets/{ticket_id}", []string{"T-1041"}},
		{"/tickets/T-88/assign", "/tickets/{ticket_id}/assign", []string{"T-88"}},
		{"/customers/42/orders/7", "/customers/{customer_id}/orders/{order_id}", []string{"42", "7"}},
		{"/categories/9", "/categories/{category_id}", []string{"9"}},
		{"/addresses/9", "/addresses/{address_id}", []string{"9"}},
		{"/statuses/9", "/statuses/{status_id}", []string{"9"}},
		{"/boxes/9", "/boxes/{box_id}", []string{"9"}},
		{"/line-items/9", "/line-items/{line_item_id}", []string{"9"}},
		{"/Users/9", "/Users/{user_id}", []string{"9"}},
		{"/42", "/{id}", []string{"42"}},
		{"/a/1/2", "/a/{a_id}/{id}", []string{"1", "2"}},
		{"/1/2/3", "/{id}/{id_2}/{id_3}", []string{"1", "2", "3"}},
		{"/tickets/1/tickets/2", "/tickets/{ticket_id}/tickets/{ticket_id_2}", []string{"1", "2"}},
		{"/users/3f2b8c1e-4d5a-4b6c-8d9e-0a1b2c3d4e5f", "/users/{user_id}", []string{"3f2b8c1e-4d5a-4b6c-8d9e-0a1b2c3d4e5f"}},
		{"/users/abcdefab-abcd-abcd-abcd-abcdefabcdef", "/users/{user_id}", []string{"abcdefab-abcd-abcd-abcd-abcdefabcdef"}},
		{"/files/abc_def-ghi_jkl-mno_pqr-stu", "/files/{file_id}", []string{"abc_def-ghi_jkl-mno_pqr-stu"}},
		{"/words/abcdefghijklmnopqrstuvwxyz", "/words/abcdefghijklmnopqrstuvwxyz", nil},
		{"/api/v2/tickets", "/api/v2/tickets", nil},
		{"/api/v2.1/tickets/x9", "/api/v2.1/tickets/{ticket_id}", []string{"x9"}},
		{"/tickets", "/tickets", nil},
		{"/tickets/", "/tickets/", nil},
		{"/", "/", nil},
		{"/{/0", "/{id}/{id_2}", []string{"{", "0"}},
		{"/tickets/{x}/notes", "/tickets/{ticket_id}/notes", []string{"{x}"}},
		{"/a}b/c{", "/{id}/{id_2}", []string{"a}b", "c{"}},
		{"", "", nil},
	} {
		got, vals := inferShape(nil, tc.path, nil)
		if string(got) != tc.want || !slices.Equal(vals, tc.vals) {
			t.Errorf("inferShape(%q) = %q %q; want %q %q", tc.path, got, vals, tc.want, tc.vals)
		}
	}
}

// TestTemplateVars names a declared template's variables in order.
func TestTemplateVars(t *testing.T) {
	for _, tc := range []struct {
		template string
		want     []string
	}{
		{"/tickets/{ticket_id}/assign", []string{"ticket_id"}},
		{"/customers/{customer}/orders/{id:[0-9]+}", []string{"customer", "id"}},
		{"/tickets", nil},
		{"/broken/{name", nil},
		{"/codes/{id:[0-9]{3}}/x", []string{"id"}}, // braces inside a pattern
	} {
		if got := templateVars(tc.template); !slices.Equal(got, tc.want) {
			t.Errorf("templateVars(%q) = %q; want %q", tc.template, got, tc.want)
		}
	}
}
