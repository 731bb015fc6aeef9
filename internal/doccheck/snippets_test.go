package doccheck_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A wrapper turns one snippet into a Go file: the snippet's own imports and
// these, the stub declarations it refers to, and a function whose body it is.
type wrapper struct {
	imports []string // beyond those the snippet imports itself; "name path" for a named import
	decls   string   // package-level declarations the snippet refers to
	sig     string   // the function's parameters and results, "" for ()
	after   string   // statements after the snippet that use what it declares
	top     bool     // the snippet is package-level declarations, not a body
}

// snippets holds every Go snippet of README.md, of the docs/ pages and of
// the doc comments, keyed by file and then by the heading it is under (a
// Markdown page) or by what the doc comment documents, with " #2" for the
// second block there. A snippet missing here fails the test, as does an
// entry whose snippet is gone.
var snippets = map[string]wrapper{
	"README.md: Use": {
		imports: []string{"context", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls: `type User struct{}
var client interface{ Ping(context.Context) error }
var api interface{ GetUser(context.Context, string) (User, error) }`,
		sig:   "(ctx context.Context, id string) error",
		after: "_ = user\nreturn err",
	},
	"README.md: Policies": {
		imports: []string{"time", "github.com/retrykit/retrykit/backoff", "github.com/retrykit/retrykit/policy"},
		decls:   "func isTemporary(error) bool { return true }",
		after:   "_ = p",
	},
	"README.md: HTTP": {
		imports: []string{"net/http", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retryhttp"},
		sig:     "() error",
		after:   "_ = client\nreturn nil",
	},
	"README.md: Retry admission": {
		imports: []string{"time", "github.com/retrykit/retrykit/backoff", "github.com/retrykit/retrykit/policy"},
		after:   "_ = p",
	},
	"docs/calls.md: One call": {
		imports: []string{"context", "errors", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls: `type Job struct{ State string }
var api interface{ GetJob(context.Context, string) (Job, error) }`,
		sig:   "(ctx context.Context, id string, p policy.Policy) error",
		after: "_ = job\nreturn err",
	},
	"docs/calls.md: How a call ends": {
		imports: []string{"context", "errors", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		sig:     "(ctx context.Context, op func(context.Context) error, p policy.Policy)",
	},
	"docs/calls.md: Restart work forever: Loop": {
		imports: []string{"context", "errors", "time", "github.com/retrykit/retrykit/backoff", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls: `type session interface {
	Consume(context.Context, func([]byte) error) error
	Close() error
}
var broker interface{ Connect(context.Context) (session, error) }
var errSessionClosed = errors.New("session closed by the broker")
func handle([]byte) error { return nil }`,
		sig:   "(ctx context.Context) error",
		after: "return err",
	},
	"docs/calls.md: Fan out: Go": {
		imports: []string{"context", "golang.org/x/sync/errgroup", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls: `type User struct{}
var api interface{ GetUser(context.Context, string) (User, error) }`,
		sig:   "(ctx context.Context, ids []string, p policy.Policy) error",
		after: "_ = users\nreturn nil",
	},
	"docs/migrating.md: What changes in every port": {
		imports: []string{"context", "errors", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls:   "var op func(context.Context) error",
		sig:     "(ctx context.Context, p policy.Policy) error",
		after:   "return err",
	},
	"docs/migrating.md: Porting a cenkalti/backoff call": {
		imports: []string{"context", "errors", "log", "time", "github.com/retrykit/retrykit/backoff", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls: `type User struct{}
var api interface{ GetUser(context.Context, string) (User, error) }
var ErrNotFound = errors.New("not found")`,
		sig:   "(ctx context.Context, id string) error",
		after: "_ = user\nreturn err",
	},
	"docs/migrating.md: Porting a go-retryablehttp client": {
		imports: []string{"log/slog", "net/http", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry", "github.com/retrykit/retrykit/retryhttp"},
		sig:     "(logger *slog.Logger, url string) error",
		after:   "return nil",
	},
	"docs/migrating.md: What behaves differently from go-retryablehttp": {
		imports: []string{"net/http", "github.com/retrykit/retrykit/retryhttp"},
		after:   "_ = retryLikeRetryablehttp",
	},
	"docs/migrating.md: Porting an avast/retry-go call": {
		imports: []string{"context", "log", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls:   "var client interface{ Ping(context.Context) error }",
		sig:     "(ctx context.Context) error",
		after:   "return err",
	},
	"docs/migrating.md: Porting a sethvargo/go-retry call": {
		imports: []string{"context", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls:   "var client interface{ Ping(context.Context) error }",
		sig:     "(ctx context.Context) error",
		after:   "return err",
	},
	"docs/migrating.md: Porting a failsafe-go retry policy": {
		imports: []string{"context", "errors", "log", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls: `type User struct{}
var api interface{ GetUser(context.Context, string) (User, error) }
var ErrBusy = errors.New("busy")`,
		sig:   "(ctx context.Context, id string) error",
		after: "_ = user\nreturn err",
	},
	"docs/testing.md: A first test": {
		imports: []string{"net/http", "testing", "testing/synctest", "time", "github.com/stretchr/testify/require", "github.com/retrykit/retrykit/retrytest"},
		decls:   "var myHandler http.Handler\n\nfunc newClientUnderTest(http.RoundTripper) *http.Client { return nil }",
		top:     true,
	},
	"docs/testing.md: Checking the waits with a mock clock": {
		imports: []string{"context", "errors", "testing", "time", "github.com/stretchr/testify/require",
			"github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry", "github.com/retrykit/retrykit/retrytest"},
		top: true,
	},
	"docs/testing.md: gRPC inside a bubble": {
		imports: []string{"context", "net", "testing", "testing/synctest", "time", "github.com/stretchr/testify/require",
			"google.golang.org/grpc", "google.golang.org/grpc/codes", "google.golang.org/grpc/credentials/insecure",
			"google.golang.org/grpc/health", "healthpb google.golang.org/grpc/health/grpc_health_v1", "google.golang.org/grpc/status",
			"google.golang.org/grpc/test/bufconn", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retrygrpc",
			"github.com/retrykit/retrykit/retrygrpc/retrygrpctest", "github.com/retrykit/retrykit/retrytest"},
		top: true,
	},
	"docs/admission.md: Retry admission": {
		imports: []string{"time", "github.com/retrykit/retrykit/backoff", "github.com/retrykit/retrykit/policy"},
		after:   "_ = p",
	},
	"docs/hedging.md: Hedged calls": {
		imports: []string{"context", "net/http", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls:   "var get func(context.Context) (*http.Response, error)\n\nfunc closeBody(resp *http.Response) { resp.Body.Close() }",
		sig:     "(ctx context.Context)",
		after:   "_, _ = resp, err",
	},
	"docs/http.md: HTTP: retryhttp": {
		imports: []string{"net/http", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retryhttp"},
		sig:     "() error",
		after:   "_ = client\nreturn nil",
	},
	"docs/http.md: Writes: idempotency keys": {
		imports: []string{"net/http", "strings", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retryhttp"},
		sig:     "(url string) error",
		after:   "_ = resp\nreturn err",
	},
	"docs/http.md: A policy per request": {
		imports: []string{"context", "net/http", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retryhttp"},
		sig:     "(ctx context.Context, url string) error",
		after:   "_ = req\nreturn err",
	},
	"docs/layers.md: The server side": {
		imports: []string{"io", "net/http", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retryhttp"},
		decls:   "var p = policy.Default().WithMaxAttempts(4)\n\nvar leafURL string",
		sig:     "() error",
	},
	"docs/layers.md: The server side #2": {
		imports: []string{"google.golang.org/grpc", "github.com/retrykit/retrykit/retrygrpc"},
		after:   "_ = srv",
	},
	"docs/grpc.md: gRPC: retrygrpc": {
		imports: []string{"context", "time", "google.golang.org/grpc", "google.golang.org/grpc/credentials", "healthpb google.golang.org/grpc/health/grpc_health_v1",
			"github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retrygrpc"},
		sig: "(ctx context.Context, target string, creds credentials.TransportCredentials, fast policy.Policy) error",
	},
	"docs/grpc.md: Writes: idempotency keys": {
		imports: []string{"time", "google.golang.org/grpc", "google.golang.org/grpc/credentials", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retrygrpc"},
		sig:     "(target string, creds credentials.TransportCredentials) error",
		after:   "_ = conn\nreturn err",
	},
	"docs/sql.md: Transactions: retrysql": {
		imports: []string{"context", "database/sql", "time", "github.com/retrykit/retrykit/backoff", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retrysql"},
		decls:   "var db *sql.DB\nvar from, to, amount int\n\nfunc transfer(context.Context, *sql.Tx, int, int, int) error { return nil }",
		sig:     "(ctx context.Context) error",
		after:   "return err",
	},
	"docs/river.md: Durable retries: retryriver": {
		imports: []string{"time", "github.com/jackc/pgx/v5/pgxpool", "github.com/riverqueue/river", "github.com/riverqueue/river/riverdriver/riverpgxv5",
			"github.com/riverqueue/river/rivertype", "github.com/retrykit/retrykit/backoff", "github.com/retrykit/retrykit/policy",
			"github.com/retrykit/retrykit/retryriver"},
		decls: "var pool *pgxpool.Pool\nvar workers *river.Workers",
		sig:   "() error",
		after: "_ = client\nreturn err",
	},
	"docs/observability.md: Metrics and span events: retryotel": {
		imports: []string{"context", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry", "github.com/retrykit/retrykit/retryotel"},
		decls:   "var charge func(context.Context) error",
		sig:     "(ctx context.Context, p policy.Policy) error",
		after:   "return err",
	},
	"docs/observability.md: Spans for every attempt, and resend_count": {
		imports: []string{"net/http", "go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp", "github.com/retrykit/retrykit/policy",
			"github.com/retrykit/retrykit/retry", "github.com/retrykit/retrykit/retryhttp", "github.com/retrykit/retrykit/retryotel"},
		sig:   "(p policy.Policy, rec *retryotel.Recorder) error",
		after: "_ = client\nreturn nil",
	},
	"docs/retryvet.md: ctx": {
		imports: []string{"context", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls:   "type Order struct{}\n\ntype Inventory struct{}\n\nfunc (*Inventory) Reserve(context.Context, Order) error { return nil }\n\nvar _ = reserve",
		top:     true,
	},
	"docs/retryvet.md: ctx #2": {
		imports: []string{"context", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls:   "type Order struct{}\n\ntype Inventory struct{}\n\nfunc (*Inventory) Reserve(context.Context, Order) error { return nil }\n\nvar _ = reserve",
		top:     true,
	},
	"docs/retryvet.md: ctx #3": {
		imports: []string{"context", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls:   "type Order struct{}\n\ntype Inventory struct{}\n\nfunc (*Inventory) Reserve(context.Context, Order) error { return nil }\n\nvar _ = reserveQuickly",
		top:     true,
	},
	"docs/retryvet.md: percall": {
		imports: []string{"context", "net/http", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry", "github.com/retrykit/retrykit/retryhttp"},
		decls:   "type Server struct{ policy policy.Policy }\n\nfunc (s *Server) charge(context.Context) error { return nil }\n\nvar _, _ = (*Server).handleOrder, fetchPrice",
		top:     true,
	},
	"docs/retryvet.md: percall #2": {
		imports: []string{"context", "net/http", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry", "github.com/retrykit/retrykit/retryhttp"},
		decls:   "type Server struct{ policy policy.Policy }\n\nfunc (s *Server) charge(context.Context) error { return nil }\n\nvar _, _ = (*Server).handleOrder, newPriceClient",
		top:     true,
	},
	"docs/retryvet.md: permanent": {
		imports: []string{"context", "errors", "fmt", "github.com/retrykit/retrykit/retry"},
		decls:   "type Card struct{ ID string }\n\ntype Payments struct{}\n\nfunc (*Payments) Charge(context.Context, Card) error { return nil }\n\nvar ErrDeclined = errors.New(\"declined\")\n\nvar _ = charge",
		top:     true,
	},
	"docs/retryvet.md: permanent #2": {
		imports: []string{"context", "errors", "fmt", "github.com/retrykit/retrykit/retry"},
		decls:   "type Card struct{ ID string }\n\ntype Payments struct{}\n\nfunc (*Payments) Charge(context.Context, Card) error { return nil }\n\nvar ErrDeclined = errors.New(\"declined\")\n\nvar _ = charge",
		top:     true,
	},
	"docs/retryvet.md: limit": {
		imports: []string{"context", "net/http", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls:   "type Server struct{}\n\nfunc (s *Server) checkStock(context.Context) error { return nil }\n\nvar _ = (*Server).handleStock",
		top:     true,
	},
	"docs/retryvet.md: limit #2": {
		imports: []string{"context", "net/http", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls:   "type Server struct{}\n\nfunc (s *Server) checkStock(context.Context) error { return nil }\n\nvar _, _ = (*Server).handleStock, (*Server).handleRestock",
		top:     true,
	},
	"docs/retryvet.md: sleep": {
		imports: []string{"context", "errors", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls:   "type Quote struct{}\n\ntype Quotes struct{}\n\nfunc (*Quotes) Get(context.Context) (Quote, error) { return Quote{}, nil }\n\nvar ErrRateLimited = errors.New(\"rate limited\")\n\nvar _ = fetchQuote",
		top:     true,
	},
	"docs/retryvet.md: sleep #2": {
		imports: []string{"context", "errors", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls:   "type Quote struct{}\n\ntype Quotes struct{}\n\nfunc (*Quotes) Get(context.Context) (Quote, error) { return Quote{}, nil }\n\nvar ErrRateLimited = errors.New(\"rate limited\")\n\nvar _ = fetchQuote",
		top:     true,
	},
	"doc.go: package": {
		imports: []string{"context", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls:   "var client interface{ Ping(context.Context) error }",
		sig:     "(ctx context.Context) error",
		after:   "return err",
	},
	"retry/doc.go: package": {
		imports: []string{"context", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls:   "var client interface{ Ping(context.Context) error }",
		sig:     "(ctx context.Context) error",
		after:   "return err",
	},
	"retry/attempt.go: Attempt": {
		imports: []string{"context", "log", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry"},
		decls:   "func ping(context.Context) error { return nil }",
		sig:     "(ctx context.Context, p policy.Policy)",
	},
	"policy/text.go: Policy.MarshalText": {
		imports: []string{"flag", "github.com/retrykit/retrykit/policy"},
	},
	"retryhttp/transport.go: package": {
		imports: []string{"net/http", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retryhttp"},
		sig:     "() error",
		after:   "_ = client\nreturn nil",
	},
	"retryhttp/transport.go: New": {
		imports: []string{"net/http", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retryhttp"},
		sig:     "(p policy.Policy) (*retryhttp.Transport, error)",
		after:   "return tr, err",
	},
	"retrysql/tx.go: package": {
		imports: []string{"context", "database/sql", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retrysql"},
		decls:   "var db *sql.DB",
		sig:     "(ctx context.Context) error",
		after:   "return err",
	},
	"retrytest/doc.go: package": {
		imports: []string{"fmt", "net/http", "net/http/httptest", "testing", "time", "github.com/retrykit/retrykit/retrytest"},
		top:     true,
	},
	"retrytest/doc.go: package #2": {
		imports: []string{"fmt", "net/http", "testing", "testing/synctest", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retryhttp", "github.com/retrykit/retrykit/retrytest"},
		top:     true,
	},
	"retrytest/doc.go: package #3": {
		imports: []string{"context", "errors", "testing", "time", "github.com/retrykit/retrykit/policy", "github.com/retrykit/retrykit/retry", "github.com/retrykit/retrykit/retrytest"},
		top:     true,
	},
}

// notGo lists the code blocks of doc comments that are not Go, with what
// they are. README.md says so by its fences' language instead.
var notGo = map[string]string{
	"policy/doc.go: package":               "the table of settings",
	"policy/guard.go: Guard":               "the table of what each outcome adds or takes",
	"policy/text.go: Policy.UnmarshalText": "the grammar of the text form",
	"policy/text.go: Policy.UnmarshalJSON": "a JSON object",
	"retrytest/fault.go: Fault":            "the table of what each layer does with each field",
	"examples/crashloop/main.go: package":  "a shell command",
	"examples/errgroup/main.go: package":   "a shell command",
	"examples/flaky/main.go: package":      "a shell command",
	"examples/httpclient/main.go: package": "a shell command",
	"examples/storm/main.go: package":      "shell commands",
	"examples/hedge/main.go: package":      "shell commands",
	"examples/layers/main.go: package":     "a shell command",
	"cmd/retry/doc.go: package":            "the command's usage",
	"cmd/retry/doc.go: package #2":         "the table of flags",
	"cmd/retry/doc.go: package #3":         "shell commands",
}

// defaultStaticcheck is the staticcheck TestSnippets runs when
// RETRYKIT_STATICCHECK=1.
const defaultStaticcheck = "honnef.co/go/tools/cmd/staticcheck@v0.8.2"

// TestSnippets compiles every Go snippet of README.md, BENCHMARKS.md, the
// docs/ pages and the doc comments in a scratch module that requires this one, and vets it: with go
// vet always, and with staticcheck when RETRYKIT_STATICCHECK is 1 or a
// staticcheck package@version (it is fetched through the module proxy, so
// CI turns it on).
func TestSnippets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a scratch module")
	}
	root, err := filepath.Abs(filepath.Join("..", "..")) // the root module
	if err != nil {
		t.Fatal(err)
	}
	// This module checks the repository it sits in. From the module cache
	// (go test all in a consumer) there is no README beside it.
	if _, err := os.Stat(filepath.Join(root, "README.md")); err != nil {
		t.Skipf("the repository's README.md is not two folders up (run from a clone, not the module cache): %v", err)
	}
	found := map[string]string{}
	for _, name := range pages(t, root) {
		maps.Copy(found, markdownSnippets(t, root, name))
	}
	docGo, docOther := docSnippets(t, root)
	for k, v := range docGo {
		found[k] = v
	}

	for k := range found {
		if _, ok := snippets[k]; !ok {
			t.Errorf("%s: a Go snippet without a wrapper; add one to snippets", k)
		}
	}
	for k := range snippets {
		if _, ok := found[k]; !ok {
			t.Errorf("%s: no such snippet any more; remove it from snippets", k)
		}
	}
	for _, k := range docOther {
		if _, ok := notGo[k]; !ok {
			t.Errorf("%s: a code block in a doc comment that is neither in snippets nor in notGo", k)
		}
	}
	for k := range notGo {
		if !slices.Contains(docOther, k) {
			t.Errorf("%s: no such code block any more; remove it from notGo", k)
		}
	}

	dir := t.TempDir()
	writeScratchModule(t, root, dir)
	names := map[string]string{} // scratch package directory → snippet key
	for _, k := range slices.Sorted(maps.Keys(found)) {
		w, ok := snippets[k]
		if !ok {
			continue
		}
		name := packageDir(k)
		names[name] = k
		src := wrap(found[k], w)
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "snippet.go"), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err == nil {
			return
		}
		t.Errorf("%s on the snippets: %v\n%s", name, err, out)
		for pkg, k := range names {
			if bytes.Contains(out, []byte(pkg+"/")) || bytes.Contains(out, []byte(pkg+":")) {
				src, _ := os.ReadFile(filepath.Join(dir, pkg, "snippet.go"))
				t.Logf("%s is %s/snippet.go:\n%s", k, pkg, numbered(src))
			}
		}
	}
	run("go vet", "vet", "./...")
	switch sc := os.Getenv("RETRYKIT_STATICCHECK"); {
	case sc == "1":
		run("staticcheck", "run", defaultStaticcheck, "./...")
	case strings.Contains(sc, "@"):
		run("staticcheck", "run", sc, "./...")
	}
}

// pages returns the Markdown pages whose identifiers are checked, relative
// to root: README.md, BENCHMARKS.md and docs/*.md.
func pages(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"README.md", "BENCHMARKS.md"}
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		names = append(names, filepath.ToSlash(rel))
	}
	return names
}

// markdownSnippets returns the ```go blocks of the Markdown page name, a
// path relative to root, keyed by name, ": " and the heading they are
// under, with " #2" and so on for the second and later blocks under one
// heading.
func markdownSnippets(t *testing.T, root, name string) map[string]string {
	t.Helper()
	path := filepath.Join(root, name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	heading := "top"
	count := map[string]int{}
	var lang string
	var block []string
	inFence := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !inFence && strings.HasPrefix(line, "```"):
			inFence, lang, block = true, strings.TrimSpace(strings.TrimPrefix(line, "```")), nil
		case inFence && strings.TrimSpace(line) == "```":
			inFence = false
			if lang != "go" {
				continue
			}
			key := name + ": " + heading
			if count[heading]++; count[heading] > 1 {
				key += fmt.Sprintf(" #%d", count[heading])
			}
			found[key] = strings.Join(block, "\n") + "\n"
		case inFence:
			block = append(block, line)
		case strings.HasPrefix(line, "#"):
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
	}
	if inFence {
		t.Fatalf("%s: unterminated code fence", path)
	}
	return found
}

// docSnippets returns the code blocks of every doc comment of the module's
// non-test Go files: those with a wrapper in snippets, keyed by file and
// declaration, and the keys of the others.
func docSnippets(t *testing.T, root string) (goBlocks map[string]string, others []string) {
	t.Helper()
	goBlocks = map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root {
				if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for name, cg := range docComments(f) {
			var p comment.Parser
			n := 0
			for _, b := range p.Parse(cg.Text()).Content {
				code, ok := b.(*comment.Code)
				if !ok {
					continue
				}
				key := rel + ": " + name
				if n++; n > 1 {
					key += fmt.Sprintf(" #%d", n)
				}
				if _, ok := snippets[key]; ok {
					goBlocks[key] = code.Text
				} else {
					others = append(others, key)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return goBlocks, others
}

// docComments returns the doc comments of f by what they document:
// "package", a declaration's name, or Type.Method.
func docComments(f *ast.File) map[string]*ast.CommentGroup {
	docs := map[string]*ast.CommentGroup{}
	add := func(name string, cg *ast.CommentGroup) {
		if cg != nil {
			docs[name] = cg
		}
	}
	add("package", f.Doc)
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				name = receiverName(d.Recv.List[0].Type) + "." + name
			}
			add(name, d.Doc)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				var names []string
				var doc *ast.CommentGroup
				switch s := spec.(type) {
				case *ast.TypeSpec:
					names, doc = []string{s.Name.Name}, s.Doc
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, field := range st.Fields.List {
							for _, n := range field.Names {
								add(s.Name.Name+"."+n.Name, field.Doc)
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names = append(names, n.Name)
					}
					doc = s.Doc
				default:
					continue
				}
				if doc == nil && len(d.Specs) == 1 {
					doc = d.Doc
				}
				for _, n := range names {
					add(n, doc)
				}
			}
			if len(d.Specs) > 1 && d.Doc != nil {
				add(fmt.Sprintf("%s group at %d", d.Tok, d.Pos()), d.Doc)
			}
		}
	}
	return docs
}

func receiverName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverName(e.X)
	case *ast.IndexExpr:
		return receiverName(e.X)
	case *ast.IndexListExpr:
		return receiverName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}

// writeScratchModule writes a go.mod in dir that requires this module from
// root, with root's requirements and go.sum, so that nothing is downloaded.
func writeScratchModule(t *testing.T, root, dir string) {
	t.Helper()
	// The gRPC module requires everything the root does, and gRPC for its
	// snippets: the scratch module starts from its go.mod. The River module
	// brings River and pgx, which -mod=mod resolves through its go.mod.
	grpcDir := filepath.Join(root, "retrygrpc")
	riverDir := filepath.Join(root, "retryriver")
	gomod, err := os.ReadFile(filepath.Join(grpcDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod := regexp.MustCompile(`(?m)^module .*$`).ReplaceAll(gomod, []byte("module snippets"))
	mod = regexp.MustCompile(`(?m)^replace .*$`).ReplaceAll(mod, nil)
	// The OpenTelemetry module, for its snippet, brings its own requirements.
	otelDir := filepath.Join(root, "retryotel")
	mod = fmt.Appendf(mod, "\nrequire github.com/retrykit/retrykit/retrygrpc v0.0.0\n\nrequire github.com/retrykit/retrykit/retryotel v0.0.0\n\nreplace github.com/retrykit/retrykit => %s\n\nreplace github.com/retrykit/retrykit/retrygrpc => %s\n\nreplace github.com/retrykit/retrykit/retryotel => %s\n", root, grpcDir, otelDir)
	mod = fmt.Appendf(mod, "\nrequire github.com/retrykit/retrykit/retryriver v0.0.0\n\nreplace github.com/retrykit/retrykit/retryriver => %s\n", riverDir)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), mod, 0o644); err != nil {
		t.Fatal(err)
	}
	var sum []byte
	for _, d := range []string{root, grpcDir, otelDir, riverDir} {
		b, err := os.ReadFile(filepath.Join(d, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		sum = append(sum, b...)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
}

// wrap makes a Go file of snippet: its leading import declarations go to
// the top, the rest is the body of func Snippet, or follows the stubs when
// w.top.
func wrap(snippet string, w wrapper) []byte {
	lines := strings.Split(strings.TrimRight(snippet, "\n"), "\n")
	var imports, body []string
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		switch {
		case len(body) == 0 && line == "import (":
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ")"; i++ {
				imports = append(imports, strings.TrimSpace(lines[i]))
			}
		case len(body) == 0 && strings.HasPrefix(line, "import "):
			imports = append(imports, strings.TrimPrefix(line, "import "))
		case len(body) == 0 && line == "":
		default:
			body = append(body, lines[i])
		}
	}
	for _, imp := range w.imports {
		if name, path, ok := strings.Cut(imp, " "); ok { // a named import
			imports = append(imports, fmt.Sprintf("%s %q", name, path))
			continue
		}
		imports = append(imports, fmt.Sprintf("%q", imp))
	}
	var b bytes.Buffer
	b.WriteString("package snippet\n\nimport (\n")
	for _, imp := range imports {
		fmt.Fprintf(&b, "\t%s\n", imp)
	}
	b.WriteString(")\n\n")
	if w.decls != "" {
		b.WriteString(w.decls + "\n\n")
	}
	if w.top {
		b.WriteString(strings.Join(body, "\n") + "\n")
		return b.Bytes()
	}
	sig := w.sig
	if sig == "" {
		sig = "()"
	}
	fmt.Fprintf(&b, "func Snippet%s {\n", sig)
	for _, line := range body {
		fmt.Fprintf(&b, "\t%s\n", line)
	}
	if w.after != "" {
		for line := range strings.SplitSeq(w.after, "\n") {
			fmt.Fprintf(&b, "\t%s\n", line)
		}
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// packageDir names the scratch package of a snippet key.
func packageDir(key string) string {
	return strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(key), "_"), "_")
}

func numbered(src []byte) string {
	var b strings.Builder
	for i, line := range strings.Split(string(src), "\n") {
		fmt.Fprintf(&b, "%3d  %s\n", i+1, line)
	}
	return b.String()
}
