package retry_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoNetworkOrCrypto: every program that retries anything compiles
// package retry, so it imports neither the network nor crypto. Those cost
// a cold build 60-odd packages and a binary about 2 MB. The classification
// of network errors lives with the integrations that use the network.
func TestNoNetworkOrCrypto(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the imports with")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "go list -deps: %s", out)
	var banned []string
	for _, pkg := range strings.Fields(string(out)) {
		if networkOrCrypto(pkg) {
			banned = append(banned, pkg)
		}
	}
	require.Empty(t, banned, "package retry imports these, directly or not")
}

// networkOrCrypto reports whether pkg is net, crypto or a package under
// either, the standard library's vendored copies included.
func networkOrCrypto(pkg string) bool {
	pkg = strings.TrimPrefix(pkg, "vendor/golang.org/x/")
	for _, root := range []string{"net", "crypto"} {
		if pkg == root || strings.HasPrefix(pkg, root+"/") {
			return true
		}
	}
	return false
}
