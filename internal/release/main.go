// Command release publishes, checks and versions the library modules of
// this repository. Run it from the repository's root:
//
//	go run ./internal/release publish -o DIR      # a file-system module proxy at v0.1.0
//	go run ./internal/release rehearse            # publish, then fetch each integration from outside
//	go run ./internal/release api                 # write api/*.txt from the tree
//	go run ./internal/release api -check          # fail when the tree's API differs from api/*.txt
//	go run ./internal/release bump v0.2.0         # every requirement on a sibling module at v0.2.0
//	go run ./internal/release tags v0.1.0         # the release's tags, in the order to push them
//
// The library modules are the ones a user requires: the root, retrygrpc,
// retryotel, retrykube, retryriver and retryvet. The benchmark module, the
// examples, retrygrpc/compare, retrysql/pgtest, retryotel/otelsuite,
// retryriver/riversuite and internal/... are not published.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// errUsage marks a command line the verb cannot run: the usage follows it.
var errUsage = errors.New("usage")

type verb struct {
	name  string
	usage string
	run   func(args []string, stdout, stderr io.Writer) error
}

var verbs = []verb{
	{"publish", "publish [-C repo] [-o dir] [-version v] [-modules a,b]", runPublish},
	{"rehearse", "rehearse [-C repo] [-version v] [-modules a,b] [-consumers dir]", runRehearse},
	{"api", "api [-C repo] [-check]", runAPI},
	{"bump", "bump [-C repo] [-tidy=false] VERSION", runBump},
	{"tags", "tags [-C repo] [-modules a,b] VERSION", runTags},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	for _, v := range verbs {
		if v.name != args[0] {
			continue
		}
		err := v.run(args[1:], stdout, stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 2
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "release: %v\nusage: go run ./internal/release %s\n", err, v.usage)
			return 2
		default:
			fmt.Fprintf(stderr, "release %s: %v\n", v.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "release: unknown verb %q\n", args[0])
	printUsage(stderr)
	return 2
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage:")
	for _, v := range verbs {
		fmt.Fprintf(w, "\tgo run ./internal/release %s\n", v.usage)
	}
}

// newFlags returns a flag set for a verb that reports its errors to stderr.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// flagSet reports whether the command line set the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
