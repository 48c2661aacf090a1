package main

import (
	"crypto/x509"
	"os"
	"os/exec"
	"testing"
)

// TestFallbackRoots checks that on a system with no CA roots, as in the
// FROM scratch image, signpost still has roots to verify an HTTPS upstream
// with. The check runs in a child process, since Go loads the system roots
// once per process.
func TestFallbackRoots(t *testing.T) {
	if os.Getenv("SIGNPOST_TEST_NO_SYSTEM_ROOTS") == "1" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			t.Fatalf("no system roots and no fallback: %v", err)
		}
		if pool.Equal(x509.NewCertPool()) {
			t.Fatal("no system roots and the fallback pool is empty")
		}
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFallbackRoots$", "-test.count=1")
	// Point Go's root loading at an empty file and directory, so that it
	// finds none, as in an image without /etc/ssl.
	cmd.Env = append(os.Environ(), "SIGNPOST_TEST_NO_SYSTEM_ROOTS=1",
		"SSL_CERT_FILE="+dir+"/none.pem", "SSL_CERT_DIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
