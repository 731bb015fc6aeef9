// Package doccheck holds the checks of the repository's documentation. Every
// Go snippet of README.md, of the docs/ pages and of the root module's doc
// comments must compile and pass go vet (and, in CI, staticcheck). Every
// identifier of a retrykit package that README.md, BENCHMARKS.md and the
// docs/ pages name must exist in that package's exported API. Every rule
// that was once stated in many places is stated in full in its home only
// (TestRuleHomes): README.md, BENCHMARKS.md, the docs/ pages and the
// comments of every Go file of every module are searched for the rule's
// distinctive facts, and a text that holds enough of them outside the
// rule's home fails the test.
//
// It is a module of its own because the snippets use the gRPC,
// OpenTelemetry and River integrations: the root module's tests stay free of
// their downloads, and CI runs this check from the workspace.
package doccheck
