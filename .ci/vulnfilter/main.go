// Command vulnfilter reads govulncheck's JSON output on standard input and
// fails when code of this project calls a vulnerable function of a module
// it requires. Vulnerabilities of the standard library belong to the Go
// toolchain the build uses, not to the module's requirements: they are
// listed, with the release that fixes them, and do not fail the run.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

type frame struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Package  string `json:"package"`
	Function string `json:"function"`
}

type message struct {
	Finding *struct {
		OSV          string  `json:"osv"`
		FixedVersion string  `json:"fixed_version"`
		Trace        []frame `json:"trace"`
	} `json:"finding"`
}

func main() {
	dec := json.NewDecoder(os.Stdin)
	modules := map[string]string{} // called vulnerabilities in required modules
	stdlib := map[string]string{}
	for {
		var m message
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			fmt.Fprintln(os.Stderr, "vulnfilter: reading govulncheck output:", err)
			os.Exit(2)
		}
		f := m.Finding
		if f == nil || len(f.Trace) == 0 || f.Trace[0].Function == "" {
			continue // not called from this project's code
		}
		top := f.Trace[0]
		line := fmt.Sprintf("%s in %s@%s (%s.%s), fixed in %s", f.OSV, top.Module, top.Version, top.Package, top.Function, f.FixedVersion)
		if top.Module == "stdlib" {
			stdlib[f.OSV] = line
		} else {
			modules[f.OSV] = line
		}
	}
	print := func(title string, lines map[string]string) {
		if len(lines) == 0 {
			return
		}
		keys := make([]string, 0, len(lines))
		for k := range lines {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Println(title)
		for _, k := range keys {
			fmt.Println("  " + lines[k])
		}
	}
	print("standard library (the toolchain's; upgrade Go to fix):", stdlib)
	print("required modules, called from this project:", modules)
	if len(modules) > 0 {
		os.Exit(1)
	}
	fmt.Printf("vulnfilter: no called vulnerability in a required module (%d in the toolchain's standard library)\n", len(stdlib))
}
