// Package compare runs retrygrpc beside the two retrying interceptors Go
// services most often use instead, go-grpc-middleware's retry (v2) and
// failsafe-go's failsafegrpc, against the same loopback health server: the
// behaviour tests that fill the README's gRPC table, and the overhead
// benchmark reported in BENCHMARKS.md.
//
// It is a module of its own so that neither peer enters retrygrpc's
// requirements. Its tests run on the real clock (the peers take no clock),
// with waits of a few hundred milliseconds at most.
package compare
