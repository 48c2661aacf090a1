package httpwire

import "context"

// ArrivedBody is a body that tells whether the rest of it is already read
// from its connection, so that reading it cannot wait on the peer: the
// front's request bodies and the upstream client's response bodies are.
// A reader may then read it at once, without a deadline or a goroutine.
type ArrivedBody interface {
	Arrived() bool
}

// AfterFuncContext is a context that registers a function to run once it
// is done, as context.AfterFunc does, without the goroutine
// context.AfterFunc starts to wait on a context it does not know: the
// front's request contexts are.
type AfterFuncContext interface {
	context.Context
	AfterFunc(f func()) (stop func() bool)
}
