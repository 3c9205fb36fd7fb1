package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyThePodTableTouchesBodies checks the rule podState's comment
// gives: outside pods.go, no code of the core names a pod state's body or
// cold fields, so every read of a pod or its records goes through live
// (or pod), which thaws a frozen one. A read of body itself would find
// nil for a frozen pod, and only for a frozen pod.
func TestOnlyThePodTableTouchesBodies(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if name == "pods.go" || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			var id *ast.Ident
			switch n := n.(type) {
			case *ast.SelectorExpr:
				id = n.Sel
			case *ast.KeyValueExpr:
				id, _ = n.Key.(*ast.Ident)
			}
			if id != nil && (id.Name == "body" || id.Name == "cold") {
				t.Errorf("%s: names a pod state's %s outside pods.go", fset.Position(id.Pos()), id.Name)
			}
			return true
		})
	}
	if checked < 20 {
		t.Fatalf("checked %d files: the walk is not looking at the core", checked)
	}
}
