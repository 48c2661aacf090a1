package main

import (
	"crypto/x509"
	"net/url"
	"os"
	"os/exec"
	"testing"
)

// TestFallbackRoots checks that on a system with no CA roots, as in the
// FROM scratch image, signpost still has roots to verify an HTTPS upstream
// with, and that it parses them only for one. Each check runs in a child
// process, since Go loads the system roots once per process.
func TestFallbackRoots(t *testing.T) {
	if upstream := os.Getenv("SIGNPOST_TEST_NO_SYSTEM_ROOTS"); upstream != "" {
		u, _ := url.Parse(upstream)
		trustFallbackRootsFor(u)
		pool, err := x509.SystemCertPool()
		empty := err != nil || pool.Equal(x509.NewCertPool())
		switch {
		case u.Scheme == "https" && empty:
			t.Fatalf("an https upstream, no system roots, and no fallback: %v", err)
		case u.Scheme == "http" && !empty:
			t.Fatal("an http upstream, and the fallback roots were parsed anyway")
		}
		return
	}
	for _, upstream := range []string{"https://api.example.com", "http://127.0.0.1:8081"} {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestFallbackRoots$", "-test.count=1")
		// Point Go's root loading at an empty file and directory, so that
		// it finds none, as in an image without /etc/ssl.
		cmd.Env = append(os.Environ(), "SIGNPOST_TEST_NO_SYSTEM_ROOTS="+upstream,
			"SSL_CERT_FILE="+dir+"/none.pem", "SSL_CERT_DIR="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("upstream %s: %v\n%s", upstream, err, out)
		}
	}
}
