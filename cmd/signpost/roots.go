package main

import (
	"crypto/x509"
	"net/url"
	"sync"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// trustFallbackRootsFor installs Mozilla's CA set, compiled in, as the
// roots to verify with where the system has none (the FROM scratch image),
// when u is an https upstream. Only a process that speaks TLS parses the
// set: it costs 0.7 MB of heap for as long as the process runs.
func trustFallbackRootsFor(u *url.URL) {
	if u != nil && u.Scheme == "https" {
		fallbackRoots()
	}
}

// fallbackRoots installs the roots once: x509.SetFallbackRoots may be
// called only once, and takes effect whenever it is, before or after the
// system's roots were looked for.
var fallbackRoots = sync.OnceFunc(func() {
	p := x509.NewCertPool()
	for c := range bundle.Roots() {
		cert, err := x509.ParseCertificate(c.Certificate)
		if err != nil {
			panic("the compiled-in CA set holds a certificate Go cannot parse: " + err.Error())
		}
		if c.Constraint == nil {
			p.AddCert(cert)
		} else {
			p.AddCertWithConstraint(cert, c.Constraint)
		}
	}
	x509.SetFallbackRoots(p)
})
