package openapi

import "testing"

// TestImportServers: routes carry the path of the spec's server, as the
// requests an agent sends do, and the upstream is the server's origin
// alone, which signpost forwards each request's whole path to.
func TestImportServers(t *testing.T) {
	for _, tc := range []importCase{
		{
			// Variables at their defaults; where the servers disagree on
			// the path, the first wins, and the file says so.
			spec:     "servers-variables.yaml",
			upstream: "https://eu.example.com",
			routes:   []string{"list_orders GET /v2/orders"},
			contains: []string{
				"# The API is at https://eu.example.com/v2/ (the spec's first server). Requests carry its path, /v2,\n" +
					"#   and so do the routes below. The upstream is its origin alone: signpost puts an upstream's own\n" +
					"#   path in front of every request's.\nupstream: https://eu.example.com\n",
				"# servers: the spec's servers disagree on the path requests carry. The routes follow the first, /v2\n" +
					"#   (https://eu.example.com/v2/); requests under /v1 (https://legacy.example.com/v1) match none of\n#   them.\n",
				"# servers: in the first server's path, {version} may also be v1; the routes follow its default, /v2.\n",
			},
		},
		{
			spec:   "servers-relative.yaml",
			routes: []string{"list_things GET /api/things"},
			contains: []string{
				"# upstream: the spec's first server, \"/api/\", names no http(s) origin; give the API's here, e.g.\n" +
					"#   upstream: https://api.example.com, or pass --upstream to signpost serve. Requests carry its\n" +
					"#   path, /api, and so do the routes below.\n",
			},
		},
		{
			// things.example.org/v1 is a host and a path, not a relative path.
			spec:     "servers-hostonly.yaml",
			routes:   []string{"list_things GET /v1/things"},
			contains: []string{"e.g. upstream: https://things.example.org, or pass --upstream"},
		},
		{
			// A path's or an operation's own servers give its routes' path.
			spec:     "servers-operation.yaml",
			upstream: "https://api.example.com",
			routes: []string{
				"root GET /v1/",
				"list_others GET /v1/others",
				"list_things GET /v1beta/things",
				"upload POST /u/uploads",
			},
			contains: []string{
				"    # servers: this operation is served at https://files.example.com/u, not at the upstream;\n" +
					"    #   signpost forwards every route to the one upstream\n",
			},
		},
		{
			spec:     "events.yaml", // a server at the root
			upstream: "https://events.example.com",
			routes:   []string{"list_events GET /events", "create_event POST /events", "get_events_id GET /events/{id}"},
		},
	} {
		t.Run(tc.spec, tc.check)
	}
}
