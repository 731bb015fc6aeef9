//go:build go1.25

package retrytest_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/retrytest"
)

func TestNewServerWhateverTheHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &counted{}
		srv := retrytest.NewServer(h)
		defer srv.Close()
		for _, url := range []string{srv.URL, "http://dependency.test/path", "http://127.0.0.1:1/"} {
			resp, err := srv.Client().Get(url)
			require.NoError(t, err)
			text, err := readAll(t, resp)
			require.NoError(t, err)
			require.Equal(t, body, text)
		}
		require.Equal(t, int32(3), h.n.Load())
	})
}

func TestNewServerRefusesOnceClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := retrytest.NewServer(&counted{})
		client := srv.Client()
		srv.Close()
		_, err := client.Get(srv.URL)
		require.ErrorContains(t, err, "connection refused")
	})
}
