package main

// The fallback roots are Mozilla's CA set, compiled in. They are used only
// where the system has none, as in the FROM scratch image, so that signpost
// can still verify an HTTPS upstream there.
import _ "golang.org/x/crypto/x509roots/fallback"
