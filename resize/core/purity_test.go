package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/resizelet/resizelet"

// Standard packages that do I/O, keep time, lock or spawn: the core and
// every package of this module it builds on must import none of them.
var impure = []string{
	"os", "os/exec", "os/signal", "io/fs", "io/ioutil", "path/filepath", "net", "net/http",
	"syscall", "sync", "sync/atomic", "unsafe", "runtime", "log",
}

// poolsOnly are the packages of this module allowed package sync, and
// why: allocation/frozen keeps its scratch space in a sync.Pool, which
// holds nothing between calls and changes no result.
var poolsOnly = []string{module + "/allocation/frozen"}

// Packages of this module that perform I/O (the cgroup managers, the CRI
// clients and simulators, the checkpoint files, the driver).
var implementations = []string{
	module + "/cgroup", module + "/cri", module + "/allocation/state", module + "/resize",
}

// External packages the core may use: API types and pure helpers.
var allowedExternal = []string{
	"k8s.io/api/", "k8s.io/apimachinery/pkg/api/", "k8s.io/apimachinery/pkg/apis/", "k8s.io/apimachinery/pkg/types",
	"k8s.io/apimachinery/pkg/util/validation", "k8s.io/apimachinery/pkg/util/sets", "k8s.io/apimachinery/pkg/util/dump",
	"k8s.io/cri-api/pkg/apis/runtime/v1", "k8s.io/component-helpers/resource",
	// allocation/frozen compresses with S2's block functions, pure
	// functions of their input.
	"github.com/klauspost/compress/s2",
}

// clockCalls are the time functions that read the clock or wait.
var clockCalls = []string{"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker"}

// TestCoreIsPure checks what package core promises: its code, and the code
// of every package of this module it imports, directly or not, imports
// nothing that does I/O or locks, reads no clock and starts no goroutine.
// External imports must be API types or pure helpers.
func TestCoreIsPure(t *testing.T) {
	root := moduleRoot(t)
	seen := map[string]bool{}
	queue := []string{module + "/resize/core"}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if seen[pkg] {
			continue
		}
		seen[pkg] = true
		if slices.Contains(implementations, pkg) {
			t.Errorf("the core imports %s, which performs I/O", pkg)
			continue
		}
		dir := filepath.Join(root, strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/"))
		for _, imp := range checkFiles(t, dir, pkg) {
			switch {
			case strings.HasPrefix(imp, module):
				queue = append(queue, imp)
			case imp == "sync" && slices.Contains(poolsOnly, pkg):
			case slices.Contains(impure, imp):
				t.Errorf("%s imports %s", pkg, imp)
			case strings.Contains(imp, "."):
				if !slices.ContainsFunc(allowedExternal, func(p string) bool { return strings.HasPrefix(imp, p) }) {
					t.Errorf("%s imports %s, which is not known to be pure", pkg, imp)
				}
			}
		}
	}
	if !seen[module+"/allocation"] || !seen[module+"/cgroup/cgconfig"] {
		t.Fatalf("the walk missed the core's own imports: %v", seen)
	}
}

// checkFiles parses a package's non-test files, reports clock reads and go
// statements, and returns its imports.
func checkFiles(t *testing.T, dir, pkg string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	fset := token.NewFileSet()
	var imports []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		timeName := ""
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			imports = append(imports, path)
			if path == "time" {
				timeName = "time"
				if imp.Name != nil {
					timeName = imp.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: %s starts a goroutine", pkg, fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && timeName != "" && id.Name == timeName && slices.Contains(clockCalls, n.Sel.Name) {
					t.Errorf("%s: %s reads the clock (time.%s)", pkg, fset.Position(n.Pos()), n.Sel.Name)
				}
			}
			return true
		})
	}
	return imports
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}
