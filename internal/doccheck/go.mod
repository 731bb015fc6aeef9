module github.com/retrykit/retrykit/internal/doccheck

go 1.26.0
