// Package doccheck holds the check that every Go snippet of README.md and of
// the root module's doc comments compiles and passes go vet (and, in CI,
// staticcheck). It is a module of its own because the snippets use the gRPC,
// OpenTelemetry and River integrations: the root module's tests stay free of
// their downloads, and CI runs this check from the workspace.
package doccheck
