package gymtrace_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// This file is the import allowlist of the root module: CONTRIBUTING.md's package table ("Layout":
// each row owns one concern and imports only the rows it lists; DESIGN.md "Packages") as data,
// checked against `go list`. A new package must be placed in a row; a new arrow between rows must be allowed here
// on purpose, in the same change that explains it in CONTRIBUTING.md.

const module = "github.com/gymtrace/gymtrace"

// A row is one line of CONTRIBUTING.md's table: the packages that own one concern and the rows they may
// import. Packages of one row may import each other. Tests of any package may also import the test
// support rows; only the rows that list a test support row may import it from non-test code.
type row struct {
	name string
	// pkgs are import paths relative to the module: "x" is the package x, "x/..." is x and every
	// package below it.
	pkgs []string
	// mayImport names the rows whose packages this row's packages may import.
	mayImport []string
	// testSupport marks rows whose packages exist for tests (reachable from tests and the demo
	// only): no library package imports them from non-test code.
	testSupport bool
}

// Row names, as CONTRIBUTING.md's table names them.
const (
	rowSemconv     = "semconv"
	rowInternals   = "low-level internals"
	rowRollout     = "rollout"
	rowCapture     = "capture"
	rowCapturetest = "capture/capturetest"
	rowSDKSpan     = "capture/sdkspan"
	rowTokens      = "tokens"
	rowStream      = "sdk/stream"
	rowProxy       = "proxy"
	rowExporter    = "exporter"
	rowFleet       = "fleet"
	rowAgentobs    = "agentobs"
	rowCmd         = "cmd/gymtrace"
	rowDemo        = "demo"
	rowTestkit     = "test support"
	rowRoot        = "module root"
)

// libraries are the rows every application may use.
var libraries = []string{rowSemconv, rowInternals, rowRollout, rowCapture, rowSDKSpan, rowTokens, rowStream, rowProxy, rowExporter, rowFleet, rowAgentobs}

// layers is CONTRIBUTING.md's table. Two readings of it: the low-level internals (byte-level helpers with
// no knowledge of capture) may be used by every row but semconv, and a row that does not exist yet
// (tokens) is listed so that its package is placed when it lands. One row is not in the design's table:
// capture/sdkspan, the one reading of an otel-go SDK span as the writer's span view, which both SDK
// adapters (exporter, agentobs) use while capture itself imports the OTel API only; it sits between
// capture and its adapters, so every arrow still points down.
var layers = []row{
	{name: rowSemconv, pkgs: []string{"semconv"}},
	{name: rowInternals, pkgs: []string{"ojson", "internal/python", "internal/growbuf", "internal/drain",
		"internal/urlredact", "internal/urlport", "internal/sandboxrun", "internal/speccheck", "internal/filekind"}},
	{name: rowRollout, pkgs: []string{"rollout"}, mayImport: []string{rowInternals}},
	{name: rowCapture, pkgs: []string{"capture"}, mayImport: []string{rowRollout, rowSemconv, rowInternals}},
	{name: rowCapturetest, pkgs: []string{"capture/capturetest"}, testSupport: true,
		mayImport: []string{rowCapture, rowRollout, rowSemconv, rowInternals, rowTestkit}},
	{name: rowSDKSpan, pkgs: []string{"capture/sdkspan"}, mayImport: []string{rowCapture}},
	{name: rowTokens, pkgs: []string{"tokens/..."}, mayImport: []string{rowRollout, rowSemconv, rowInternals}},
	{name: rowStream, pkgs: []string{"sdk/stream"}, mayImport: []string{rowInternals}},
	{name: rowProxy, pkgs: []string{"proxy"},
		mayImport: []string{rowRollout, rowCapture, rowTokens, rowStream, rowExporter, rowSemconv, rowInternals}},
	{name: rowExporter, pkgs: []string{"exporter"}, mayImport: []string{rowCapture, rowSDKSpan, rowInternals}},
	{name: rowFleet, pkgs: []string{"fleet"}, mayImport: []string{rowSemconv, rowInternals}},
	{name: rowAgentobs, pkgs: []string{"agentobs/..."}, mayImport: []string{rowRollout, rowCapture, rowSDKSpan, rowSemconv, rowInternals}},
	{name: rowCmd, pkgs: []string{"cmd/..."}, mayImport: append([]string{rowDemo}, libraries...)},
	{name: rowDemo, pkgs: []string{"cmd/gymtrace/internal/demo", "cmd/gymtrace/internal/bench"}, mayImport: append([]string{rowCmd, rowTestkit}, libraries...)},
	{name: rowTestkit, pkgs: []string{"internal/testkit/..."}, testSupport: true,
		mayImport: append([]string{rowCapturetest}, libraries...)},
	{name: rowRoot, pkgs: []string{"."}}, // this test only
}

// thirdParty limits where some third-party modules may be imported (directly, test files included):
// module path prefix → the rows that may import it; no rows = nowhere in the root module.
var thirdParty = map[string][]string{
	"github.com/andybalholm/brotli":                                 {rowProxy, rowTestkit}, // compression only where bodies are decoded, and the bombs of internal/testkit/bomb
	"github.com/klauspost/compress":                                 {rowProxy, rowTestkit},
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp": {rowProxy},
	"github.com/spf13/cobra":                                        {rowCmd, rowDemo},
	"github.com/chromedp/":                                          {},                   // the browser test lives in e2e/
	"github.com/go-analyze/":                                        {rowCmd},             // the HTML report's charts
	"github.com/jedib0t/":                                           {rowCmd, rowDemo},    // the terminal tables (the bench, in the demo row, prints its own)
	"go.opentelemetry.io/otel/exporters/":                           {rowCmd, rowTestkit}, // OTLP wiring is the CLI's
}

// agentobsForbiddenDeps must not be in `go list -deps ./agentobs` (#13 "Done when"): the
// observations SDK does not pull in the proxy's body decoding or SSE reassembly.
var agentobsForbiddenDeps = []string{
	"github.com/andybalholm/brotli",
	"github.com/klauspost/compress",
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp",
	module + "/sdk/stream",
}

// pendingExceptions are arrows today's tree has and the table forbids, each with the #13 step
// that removes it. The test fails when an arrow is here but gone from the tree: delete its line, so
// this list only shrinks. "pkg -> import" for imports, "deps(pkg) -> dep" for agentobsForbiddenDeps.
var pendingExceptions = map[string]string{
	"agentobs -> proxy": "test files only: two integration tests run the agent's transport and rollout root " +
		"span through the real proxy (agentobs itself imports rollout, not the proxy); they belong in e2e/",
}

// listedPackage is the part of `go list -json` this test reads.
type listedPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
}

func TestLayering(t *testing.T) {
	pkgs := goList(t)
	byName := make(map[string]*row, len(layers))
	for i := range layers {
		byName[layers[i].name] = &layers[i]
	}
	for _, r := range layers {
		for _, n := range r.mayImport {
			require.Contains(t, byName, n, "row %q lists an unknown row", r.name)
		}
	}

	used := make(map[string]bool)
	var problems []string
	fail := func(key, msg string) {
		if _, ok := pendingExceptions[key]; ok {
			used[key] = true
			return
		}
		problems = append(problems, msg)
	}
	for _, p := range pkgs {
		rel, ok := relative(p.ImportPath)
		if !ok {
			continue
		}
		r := rowOf(rel)
		if r == nil {
			problems = append(problems, fmt.Sprintf("%s is in no row of the layering table: place it (layering_test.go, CONTRIBUTING.md)", rel))
			continue
		}
		check := func(imports []string, test bool) {
			for _, imp := range imports {
				if irel, ok := relative(imp); ok {
					if irel == rel {
						continue // an external test importing its package
					}
					ir := rowOf(irel)
					switch {
					case ir == nil:
						// reported as unplaced above
					case ir.name == r.name || slices.Contains(r.mayImport, ir.name):
					case test && ir.testSupport:
					case test && ir.name == rowSemconv: // tests build spans with the conventions' keys
					default:
						fail(rel+" -> "+irel, fmt.Sprintf("%s -> %s: row %q may not import row %q", rel, irel, r.name, ir.name))
					}
					continue
				}
				for prefix, rows := range thirdParty {
					if strings.HasPrefix(imp, prefix) && !slices.Contains(rows, r.name) {
						fail(rel+" -> "+imp, fmt.Sprintf("%s -> %s: only %v may import %s", rel, imp, rows, prefix))
					}
				}
			}
		}
		check(p.Imports, false)
		check(p.TestImports, true)
		check(p.XTestImports, true)

		if !r.testSupport && !strings.HasPrefix(rel, "cmd/") && rel != "." {
			// A library package: nothing it is built from is an application or test support.
			for _, dep := range p.Deps {
				if drel, ok := relative(dep); ok {
					if dr := rowOf(drel); dr != nil && (dr.testSupport || strings.HasPrefix(drel, "cmd/")) {
						fail(rel+" -> "+drel, fmt.Sprintf("go list -deps ./%s contains %s (row %q)", rel, drel, dr.name))
					}
				}
			}
		}
		if rel == "agentobs" {
			for _, dep := range p.Deps {
				for _, bad := range agentobsForbiddenDeps {
					if dep == bad || strings.HasPrefix(dep, bad+"/") {
						fail("deps(agentobs) -> "+bad, fmt.Sprintf("go list -deps ./agentobs contains %s (from %s)", bad, dep))
					}
				}
			}
		}
	}
	for key, why := range pendingExceptions {
		if !used[key] {
			problems = append(problems, fmt.Sprintf("pending exception %q (%s) is no longer needed: delete it", key, why))
		}
	}
	slices.Sort(problems)
	problems = slices.Compact(problems)
	if len(problems) > 0 {
		t.Errorf("the import graph breaks CONTRIBUTING.md's package table:\n%s", strings.Join(problems, "\n"))
	}
}

// TestLayeringRowsAreDisjoint guards the table itself: each package pattern belongs to one row,
// except the demo, which is carved out of cmd/... by its exact path.
func TestLayeringRowsAreDisjoint(t *testing.T) {
	seen := make(map[string]string)
	for _, r := range layers {
		for _, p := range r.pkgs {
			require.NotContains(t, seen, p, "pattern %q is in rows %q and %q", p, seen[p], r.name)
			seen[p] = r.name
		}
	}
	require.Equal(t, rowDemo, rowOf("cmd/gymtrace/internal/demo").name)
	require.Equal(t, rowCmd, rowOf("cmd/gymtrace/internal/report").name)
	require.Equal(t, rowAgentobs, rowOf("agentobs/claudecode").name)
	require.Nil(t, rowOf("agentobsx"), "x/... matches x and packages below it only")
}

// rowOf returns the row of the package at rel (relative to the module), the most specific pattern
// winning; nil when no row holds it.
func rowOf(rel string) *row {
	var best *row
	bestLen := -1
	for i := range layers {
		for _, p := range layers[i].pkgs {
			base, tree := strings.CutSuffix(p, "/...")
			if (rel == base || (tree && strings.HasPrefix(rel, base+"/"))) && len(p) > bestLen {
				best, bestLen = &layers[i], len(p)
				if !tree {
					bestLen++ // an exact path beats a tree of the same length
				}
			}
		}
	}
	return best
}

// relative returns the import path relative to the module ("." for the module itself) and whether
// it is the module's.
func relative(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	rel, ok := strings.CutPrefix(path, module+"/")
	return rel, ok
}

// goList runs `go list -json` over the module's packages.
func goList(t *testing.T) []listedPackage {
	t.Helper()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the layering test runs the go command")
	cmd := exec.CommandContext(t.Context(), goTool, "list", "-json=ImportPath,Imports,TestImports,XTestImports,Deps", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		pkgs = append(pkgs, p)
	}
	require.NotEmpty(t, pkgs)
	return pkgs
}
