package otelsuite_test

import (
	"context"
	"errors"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryotel"
)

// One Recorder per dependency, its hooks given to every call that reaches
// it. Here the meter provider is the SDK's, read by hand; a service would
// use otel.SetMeterProvider and an exporter, and leave out the option.
func ExampleNew() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	rec, err := retryotel.New("inventory", retryotel.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	attempts := 0
	err = retry.Do(context.Background(), func(context.Context) error {
		if attempts++; attempts < 3 {
			return errors.New("connection refused")
		}
		return nil
	}, policy.Constant(0).WithMaxAttempts(5), retry.WithHooks(rec.Hooks()))
	fmt.Println("call:", err)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			fmt.Println(m.Name, d.DataPoints[0].Value)
		case metricdata.Histogram[int64]:
			fmt.Println(m.Name, "sum", d.DataPoints[0].Sum)
		case metricdata.Histogram[float64]:
			fmt.Println(m.Name, "count", d.DataPoints[0].Count)
		}
	}
	// Output:
	// call: <nil>
	// retry.client.calls 1
	// retry.client.call.retries sum 2
}
