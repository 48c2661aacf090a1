// Command pause holds a network namespace for the containers that join it,
// as a Kubernetes pod's pause container does: it does nothing until SIGTERM
// or SIGINT. The Compose example runs the legacy API and signpost in its
// namespace, so that either can be killed and restarted without taking the
// published port, or the other's loopback, with it.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, os.Interrupt)
	<-c
}
