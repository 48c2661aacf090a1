// Package test holds signpost's end-to-end tests. They build the real
// binary once, run it as a child process in front of real loopback
// upstreams, and check what an agent would see on the wire: status, headers,
// body bytes and the operator's metrics.
//
// Everything listens on 127.0.0.1 port 0 and every wait is bounded.
package test
