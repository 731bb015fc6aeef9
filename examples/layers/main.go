// Command layers measures retry at one layer on loopback servers: a user's
// client calls edge, which calls mid, which calls leaf, every hop retrying
// through retryhttp under the same policy (4 attempts, 10 ms base,
// doubling, capped at 100 ms, full jitter, a 1 s attempt timeout) with a
// guard of its own. It runs every scenario with the signal on (every
// server behind retryhttp.Handler), with every layer retrying blindly, and
// with no retry, in real time (about a minute), and prints the
// table.
//
//	go run ./examples/layers
package main

import (
	"fmt"
	"log"

	"github.com/retrykit/retrykit/internal/layers"
)

func main() {
	tab, err := layers.RunAll(layers.Loopback)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(tab)
}
