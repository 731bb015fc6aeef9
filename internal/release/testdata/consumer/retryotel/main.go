// Command retryotel uses the retryotel module as a user does after
// `go get github.com/retrykit/retrykit/retryotel`: a recorder's hooks on a
// call that fails twice, and the metrics read from the SDK.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryotel"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)

	rec, err := retryotel.New("inventory", retryotel.WithMeterProvider(mp))
	if err != nil {
		return err
	}
	attempts := 0
	err = retry.Do(ctx, func(context.Context) error {
		if attempts++; attempts < 3 {
			return errors.New("connection refused")
		}
		return nil
	}, policy.Constant(time.Millisecond).WithMaxAttempts(5), retry.WithHooks(rec.Hooks()))
	if err != nil {
		return err
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		return err
	}
	metrics := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			metrics++
			fmt.Println("retryotel: metric", m.Name)
		}
	}
	if metrics == 0 {
		return errors.New("the recorder reported no metric")
	}
	return nil
}
