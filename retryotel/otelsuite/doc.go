// Package otelsuite holds the tests of retryotel that need the
// OpenTelemetry SDK, gRPC, otelgrpc or otelhttp. It is a module of its own,
// never released, so that retryotel's go.mod requires only what its library
// code imports: a program that uses retryotel does not get these modules,
// or their versions, in its build.
package otelsuite
