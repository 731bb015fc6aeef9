module github.com/retrykit/retrykit/retrykube

go 1.26.0

replace github.com/retrykit/retrykit => ..

require (
	github.com/retrykit/retrykit v0.1.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/time v0.15.0
	k8s.io/apimachinery v0.37.2
	k8s.io/client-go v0.37.2
)

require (
	github.com/go-logr/logr v1.4.3 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
	k8s.io/utils v0.0.0-20260626114624-be93311217bd // indirect
)
