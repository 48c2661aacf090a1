package mcp_test

import (
	"bufio"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestStdioOpensOnlyTheAdminPort: over stdio, tool calls reach the
// pipeline in process, so the one port signpost mcp opens is the admin
// listener's; no agents' listener waits unused.
func TestStdioOpensOnlyTheAdminPort(t *testing.T) {
	before := listeningPorts(t)
	s := serve(t, filepath.Join("..", "configs", "tickets.yaml"))
	var opened []string
	for _, port := range listeningPorts(t) {
		if !slices.Contains(before, port) {
			opened = append(opened, port)
		}
	}
	admin, _ := url.Parse(s.admin)
	upstream, _ := url.Parse(s.upstream.URL) // the test's own ticket API
	want := []string{admin.Port(), upstream.Port()}
	slices.Sort(opened)
	slices.Sort(want)
	if !slices.Equal(opened, want) {
		t.Errorf("serving over stdio opened listeners on ports %v; want the admin listener's (%s) alone, beside the test's upstream (%s)",
			opened, admin.Port(), upstream.Port())
	}
}

// listeningPorts returns the ports of the TCP sockets this process
// listens on, from /proc.
func listeningPorts(t *testing.T) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc to find listeners in: %v", err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if inode, ok := strings.CutPrefix(target, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var ports []string
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the column names
		for sc.Scan() {
			// local_address is field 1 (ADDR:PORT in hex), st field 3
			// (0A is LISTEN), inode field 9.
			fields := strings.Fields(sc.Text())
			if len(fields) <= 9 || fields[3] != "0A" || !inodes[fields[9]] {
				continue
			}
			_, hex, _ := strings.Cut(fields[1], ":")
			if port, err := strconv.ParseUint(hex, 16, 16); err == nil {
				ports = append(ports, strconv.FormatUint(port, 10))
			}
		}
		f.Close()
	}
	return ports
}
