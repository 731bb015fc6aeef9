// Package doccheck holds the checks of the repository's documentation. Every
// Go snippet of README.md, of the docs/ pages and of the root module's doc
// comments must compile and pass go vet (and, in CI, staticcheck). Every
// identifier of a retrykit package that README.md, BENCHMARKS.md and the
// docs/ pages name must exist in that package's exported API.
//
// It is a module of its own because the snippets use the gRPC,
// OpenTelemetry and River integrations: the root module's tests stay free of
// their downloads, and CI runs this check from the workspace.
package doccheck
