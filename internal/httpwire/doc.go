// Package httpwire holds the wire rules of HTTP/1.1 that signpost's front,
// its upstream client and its pipeline share: where a head ends, what a
// field, a token list, a host and a status line may hold, and how a field
// is written. Each rule is written once, here, as net/http applies it; and
// the two contracts between the front, the upstream client and the
// pipeline that go beyond net/http's types (ArrivedBody, AfterFuncContext).
package httpwire
