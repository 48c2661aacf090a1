// Package configs holds the example rule files, embedded so that
// `signpost demo` runs the very rules this folder ships.
package configs

import _ "embed"

// Tickets is tickets.yaml: the ticket API of the demo and the guide.
//
//go:embed tickets.yaml
var Tickets []byte
