// gocallgraph: a stdlib-only Go call-graph oracle.
//
// Usage:
//
//	gocallgraph [-tests=true] [-rel DIR] [-o edges.jsonl] [-stats stats.json] [-skipped skipped.txt] ROOT
//
// Walks ROOT, and for every directory that holds a Go package (files selected by
// go/build for the current GOOS/GOARCH and build tags) parses and type-checks it with
// go/types, importing dependencies from source (importer.ForCompiler(fset, "source",
// nil)).  Type errors, including missing third-party packages, are counted and
// tolerated.  For every call expression whose callee is a *types.Func (function,
// concrete method, or interface method) it prints one JSON line:
//
//	{"caller_path":"server.go","caller_line":120,"caller":"(*Server).Serve",
//	 "callee_path":"server.go","callee_line":300,"callee":"(*conn).serve","callee_name":"serve",
//	 "callee_pkg":"net/http","callee_kind":"method","callee_internal":true,
//	 "site_path":"server.go","site_line":150,"site_col":5,"site_end_col":10,"call_col":3}
//
// Paths are relative to -rel (default ROOT) when inside it, absolute otherwise.  Lines
// and columns are 1-based; columns are byte columns (go/token).  site = the callee name
// identifier (Sel of a selector).  caller_line / callee_line = line of the declaration's
// name identifier.  Calls in function literals are attributed to the enclosing FuncDecl;
// calls outside any FuncDecl (package-level var initialisers) have caller = null.
// Builtins, conversions and calls of func-typed values (closures, fields, params) are
// not edges; they are only counted.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

type edge struct {
	CallerPath     *string `json:"caller_path"`
	CallerLine     *int    `json:"caller_line"`
	Caller         *string `json:"caller"`
	CalleePath     string  `json:"callee_path"`
	CalleeLine     int     `json:"callee_line"`
	Callee         string  `json:"callee"`
	CalleeName     string  `json:"callee_name"`
	CalleePkg      string  `json:"callee_pkg"`
	CalleeKind     string  `json:"callee_kind"`
	CalleeInternal bool    `json:"callee_internal"`
	SitePath       string  `json:"site_path"`
	SiteLine       int     `json:"site_line"`
	SiteCol        int     `json:"site_col"`
	SiteEndCol     int     `json:"site_end_col"`
	CallCol        int     `json:"call_col"`
	InTestFile     bool    `json:"in_test_file"`
}

var (
	nonEdgeOut *bufio.Writer
	fset       = token.NewFileSet()
	stats      = map[string]int{}
	relBase    string
)

func rel(p string) (string, bool) {
	if r, err := filepath.Rel(relBase, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r), true
	}
	return p, false
}

func recvName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	ptr := false
	if s, ok := t.(*ast.StarExpr); ok {
		ptr = true
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	name := "?"
	if id, ok := t.(*ast.Ident); ok {
		name = id.Name
	}
	if ptr {
		return "(*" + name + ")"
	}
	return name
}

func funcDeclName(fd *ast.FuncDecl) string {
	if r := recvName(fd); r != "" {
		return r + "." + fd.Name.Name
	}
	return fd.Name.Name
}

func funcObjName(fn *types.Func) string {
	sig, _ := fn.Type().(*types.Signature)
	if sig != nil && sig.Recv() != nil {
		rt := sig.Recv().Type()
		ptr := false
		if p, ok := rt.(*types.Pointer); ok {
			ptr = true
			rt = p.Elem()
		}
		name := "?"
		switch t := rt.(type) {
		case *types.Named:
			name = t.Obj().Name()
		case *types.Alias:
			name = t.Obj().Name()
		case *types.Interface:
			name = "interface"
		}
		if ptr {
			return "(*" + name + ")." + fn.Name()
		}
		return name + "." + fn.Name()
	}
	return fn.Name()
}

func calleeIdent(fun ast.Expr) *ast.Ident {
	for {
		switch x := fun.(type) {
		case *ast.ParenExpr:
			fun = x.X
		case *ast.IndexExpr: // f[T](...)
			fun = x.X
		case *ast.IndexListExpr: // f[T, U](...)
			fun = x.X
		case *ast.Ident:
			return x
		case *ast.SelectorExpr:
			return x.Sel
		default:
			return nil
		}
	}
}

func checkPackage(dir, importPath, name string, files []*ast.File,
	imp types.Importer, out *bufio.Writer, isTest map[*ast.File]bool) *types.Package {
	info := &types.Info{
		Uses:       map[*ast.Ident]types.Object{},
		Defs:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
		Types:      map[ast.Expr]types.TypeAndValue{},
	}
	nerr := 0
	conf := types.Config{
		Importer: imp,
		Error: func(err error) {
			nerr++
			if nerr <= 3 && os.Getenv("GOCALLGRAPH_VERBOSE") != "" {
				fmt.Fprintln(os.Stderr, "  type error:", err)
			}
		},
		FakeImportC: true,
	}
	pkg, _ := conf.Check(importPath, fset, files, info)
	stats["type_errors"] += nerr
	if nerr > 0 {
		stats["packages_with_type_errors"]++
		if os.Getenv("GOCALLGRAPH_VERBOSE") != "" {
			fmt.Fprintf(os.Stderr, "%s (%s): %d type errors\n", dir, name, nerr)
		}
	}
	stats["packages"]++
	for _, f := range files {
		for _, decl := range f.Decls {
			var callerPath *string
			var callerLine *int
			var caller *string
			fd, isFunc := decl.(*ast.FuncDecl)
			if isFunc {
				stats["func_decls"]++
				p := fset.Position(fd.Name.Pos())
				rp, _ := rel(p.Filename)
				ln := p.Line
				nm := funcDeclName(fd)
				callerPath, callerLine, caller = &rp, &ln, &nm
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				stats["call_exprs"]++
				id := calleeIdent(call.Fun)
				nonEdge := func(kind string) bool {
					stats["calls_"+kind]++
					if nonEdgeOut != nil {
						pos := fset.Position(call.Pos())
						if id != nil {
							pos = fset.Position(id.Pos())
						}
						sp, _ := rel(pos.Filename)
						b, _ := json.Marshal(map[string]any{"site_path": sp, "site_line": pos.Line,
							"site_col": pos.Column, "kind": kind, "in_test_file": isTest[f]})
						nonEdgeOut.Write(b)
						nonEdgeOut.WriteByte('\n')
					}
					return true
				}
				if tv, ok := info.Types[call.Fun]; ok && tv.IsType() {
					return nonEdge("conversion") // T(x), []byte(s), (*T)(p)
				}
				if id == nil {
					return nonEdge("dynamic_expr") // f()(), m[k](), func(){}(), ...
				}
				obj := info.Uses[id]
				if obj == nil {
					return nonEdge("unresolved") // type errors, missing imports
				}
				var fn *types.Func
				switch o := obj.(type) {
				case *types.Func:
					fn = o
				case *types.Builtin:
					return nonEdge("builtin")
				case *types.TypeName:
					return nonEdge("conversion")
				case *types.Var:
					return nonEdge("func_value") // closures, func-typed fields/params
				default:
					return nonEdge("other_object")
				}
				fn = fn.Origin()
				kind := "func"
				if sig, _ := fn.Type().(*types.Signature); sig != nil && sig.Recv() != nil {
					kind = "method"
					if types.IsInterface(sig.Recv().Type()) {
						kind = "interface_method"
					}
				}
				stats["calls_to_"+kind]++
				site := fset.Position(id.Pos())
				sitePath, _ := rel(site.Filename)
				e := edge{
					CallerPath: callerPath, CallerLine: callerLine, Caller: caller,
					Callee: funcObjName(fn), CalleeName: fn.Name(), CalleeKind: kind,
					SitePath: sitePath, SiteLine: site.Line, SiteCol: site.Column,
					SiteEndCol: site.Column + len(id.Name), CallCol: fset.Position(call.Pos()).Column,
					InTestFile: isTest[f],
				}
				if fn.Pkg() != nil {
					e.CalleePkg = fn.Pkg().Path()
				}
				if fn.Pos().IsValid() {
					dp := fset.Position(fn.Pos())
					e.CalleePath, e.CalleeInternal = rel(dp.Filename)
					e.CalleeLine = dp.Line
				} else {
					stats["callee_without_position"]++
				}
				if e.CalleeInternal {
					stats["edges_internal"]++
				} else {
					stats["edges_external"]++
				}
				if caller == nil {
					stats["edges_outside_func"]++
				}
				b, _ := json.Marshal(e)
				out.Write(b)
				out.WriteByte('\n')
				stats["edges"]++
				return true
			})
		}
	}
	return pkg
}

// treeImporter is a from-source importer with one shared package cache.  Packages
// inside ROOT are analysed fully (bodies + in-package tests, edges emitted) the first
// time they are needed, so every importer of an in-tree package - including external
// _test packages and other in-tree packages - sees one and the same *types.Package
// (no "X is not X" mismatches, export_test.go symbols visible to xtests).  Packages
// outside ROOT are type-checked from source with IgnoreFuncBodies.
type treeImporter struct {
	ctxt    build.Context
	cache   map[string]*types.Package
	busy    map[string]bool
	inTree  map[string]bool // dir -> is an analysable dir inside ROOT
	analyse func(dir string, bp *build.Package) *types.Package
	modPath string // module path of the go.mod at or above ROOT ("" if none)
	modDir  string
}

// moduleDir maps an import path of the enclosing module to its directory, so that
// in-tree packages resolve without `go list` (which fails when go.mod requires
// modules that are not downloaded).
func (t *treeImporter) moduleDir(path string) (string, bool) {
	if t.modPath == "" || (path != t.modPath && !strings.HasPrefix(path, t.modPath+"/")) {
		return "", false
	}
	dir := filepath.Join(t.modDir, filepath.FromSlash(strings.TrimPrefix(path, t.modPath)))
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir, true
	}
	return "", false
}

// findModule returns the module path and directory of the go.mod at or above dir.
func findModule(dir string) (string, string) {
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				f := strings.Fields(line)
				if len(f) >= 2 && f[0] == "module" {
					return strings.Trim(f[1], `"`), d
				}
			}
			return "", ""
		}
		if filepath.Dir(d) == d {
			return "", ""
		}
	}
}

func (t *treeImporter) Import(path string) (*types.Package, error) {
	return t.ImportFrom(path, "", 0)
}

func (t *treeImporter) ImportFrom(path, srcDir string, mode types.ImportMode) (*types.Package, error) {
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	var bp *build.Package
	var err error
	if dir, ok := t.moduleDir(path); ok {
		bp, err = t.ctxt.ImportDir(dir, 0)
		if bp != nil {
			bp.ImportPath = path
		}
	} else {
		bp, err = t.ctxt.Import(path, srcDir, 0)
	}
	if bp == nil || bp.Dir == "" {
		stats["import_errors"]++
		return nil, fmt.Errorf("import %q: %v", path, err)
	}
	key := bp.ImportPath
	if p, ok := t.cache[key]; ok {
		return p, nil
	}
	depKey := key
	if t.busy[key] {
		// P is being analysed (with its in-package tests) and something its tests
		// import depends on P again (go test "recompiles" such deps).  Give them a
		// separate, body-less, non-test copy of P.
		depKey = key + " [non-test copy]"
		if p, ok := t.cache[depKey]; ok {
			return p, nil
		}
		if t.busy[depKey] {
			stats["import_cycles"]++
			return nil, fmt.Errorf("import cycle via %q", key)
		}
		stats["non_test_copies"]++
	}
	t.busy[depKey] = true
	defer delete(t.busy, depKey)
	if depKey == key && t.inTree[bp.Dir] {
		if p := t.analyse(bp.Dir, bp); p != nil {
			return p, nil
		}
	}
	var files []*ast.File
	for _, n := range append(append([]string{}, bp.GoFiles...), bp.CgoFiles...) {
		f, _ := parser.ParseFile(fset, filepath.Join(bp.Dir, n), nil, parser.SkipObjectResolution)
		if f != nil {
			files = append(files, f)
		}
	}
	conf := types.Config{Importer: t, IgnoreFuncBodies: true, FakeImportC: true,
		Error: func(error) { stats["dep_type_errors"]++ }}
	p, _ := conf.Check(key, fset, files, nil)
	stats["dep_packages"]++
	t.cache[depKey] = p
	return p, nil
}

func main() {
	tests := flag.Bool("tests", true, "include _test.go files (in-package and external test packages)")
	relFlag := flag.String("rel", "", "make paths relative to this dir (default: ROOT)")
	outFlag := flag.String("o", "-", "output JSONL")
	statsFlag := flag.String("stats", "", "write stats JSON here")
	skippedFlag := flag.String("skipped", "", "write .go files not analysed (build constraints) here")
	impFlag := flag.String("importer", "tree", `"tree" (shared-cache source importer, default) or "source" (importer.ForCompiler(fset, "source", nil))`)
	nonEdgesFlag := flag.String("nonedges", "", "also write call sites that are not edges (builtin, conversion, func_value, dynamic_expr, unresolved) here")
	cgo := flag.Bool("cgo", false, "select cgo files (needs a C toolchain for -importer=source); default: pure-Go file set")
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	root, _ := filepath.Abs(flag.Arg(0))
	relBase = root
	if *relFlag != "" {
		relBase, _ = filepath.Abs(*relFlag)
	}
	var w *os.File = os.Stdout
	if *outFlag != "-" {
		var err error
		if w, err = os.Create(*outFlag); err != nil {
			panic(err)
		}
	}
	out := bufio.NewWriterSize(w, 1<<20)
	if *nonEdgesFlag != "" {
		nf, err := os.Create(*nonEdgesFlag)
		if err != nil {
			panic(err)
		}
		defer nf.Close()
		nonEdgeOut = bufio.NewWriterSize(nf, 1<<20)
		defer nonEdgeOut.Flush()
	}
	start := time.Now()
	ctxt := build.Default
	ctxt.CgoEnabled = *cgo
	build.Default.CgoEnabled = *cgo // also used by the "source" importer

	modPath, modDir := findModule(root)
	var dirs []string
	inTree := map[string]bool{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			n := d.Name()
			if p != root && (n == "testdata" || n == "vendor" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			dirs = append(dirs, p)
			inTree[p] = true
		}
		return nil
	})
	parse := func(dir string, names []string, isTestFile bool, isTest map[*ast.File]bool) []*ast.File {
		var fs []*ast.File
		for _, n := range names {
			f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				stats["parse_errors"]++
			}
			if f != nil {
				fs = append(fs, f)
				isTest[f] = isTestFile
				stats["files"]++
			}
		}
		return fs
	}
	done := map[string]*types.Package{}
	var imp types.Importer
	var tree *treeImporter
	analyse := func(dir string, bp *build.Package) *types.Package {
		if p, ok := done[dir]; ok {
			return p
		}
		done[dir] = nil
		importPath := bp.ImportPath
		if importPath == "" || importPath == "." {
			r, _ := filepath.Rel(root, dir)
			importPath = filepath.ToSlash(filepath.Join("_oracle", r))
		}
		isTest := map[*ast.File]bool{}
		files := parse(dir, append(append([]string{}, bp.GoFiles...), bp.CgoFiles...), false, isTest)
		if *tests {
			files = append(files, parse(dir, bp.TestGoFiles, true, isTest)...)
		}
		if len(files) == 0 {
			return nil
		}
		p := checkPackage(dir, importPath, bp.Name, files, imp, out, isTest)
		done[dir] = p
		if tree != nil && p != nil {
			tree.cache[bp.ImportPath] = p
		}
		return p
	}
	if *impFlag == "source" {
		imp = importer.ForCompiler(fset, "source", nil)
	} else {
		tree = &treeImporter{ctxt: ctxt, cache: map[string]*types.Package{}, busy: map[string]bool{},
			inTree: inTree, analyse: analyse, modPath: modPath, modDir: modDir}
		imp = tree
	}

	var skipped []string
	var xtests []func()
	for _, dir := range dirs {
		bp, err := ctxt.ImportDir(dir, 0)
		if bp != nil && modPath != "" && !strings.HasPrefix(dir, ctxt.GOROOT+string(filepath.Separator)) {
			if r, e := filepath.Rel(modDir, dir); e == nil && !strings.HasPrefix(r, "..") {
				bp.ImportPath = strings.TrimSuffix(modPath+"/"+filepath.ToSlash(r), "/.")
			}
		}
		if bp != nil {
			for _, n := range append(append([]string{}, bp.IgnoredGoFiles...), bp.InvalidGoFiles...) {
				skipped = append(skipped, filepath.Join(dir, n))
			}
		}
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				continue
			}
			if _, ok := err.(*build.MultiplePackageError); ok {
				stats["dirs_multiple_packages"]++
				continue
			}
			stats["dirs_import_error"]++
			if bp == nil || len(bp.GoFiles)+len(bp.CgoFiles)+len(bp.XTestGoFiles) == 0 {
				continue
			}
		}
		if tree != nil && bp.ImportPath != "" && bp.ImportPath != "." {
			tree.ImportFrom(bp.ImportPath, dir, 0) // analyses in-tree deps first
		}
		analyse(dir, bp)
		if *tests && len(bp.XTestGoFiles) > 0 {
			dir, bp := dir, bp
			xtests = append(xtests, func() {
				isTest := map[*ast.File]bool{}
				xf := parse(dir, bp.XTestGoFiles, true, isTest)
				checkPackage(dir, bp.ImportPath+"_test", bp.Name+"_test", xf, imp, out, isTest)
			})
		}
	}
	for _, f := range xtests {
		f()
	}
	out.Flush()
	if w != os.Stdout {
		w.Close()
	}
	stats["skipped_go_files"] = len(skipped)
	stats["elapsed_ms"] = int(time.Since(start).Milliseconds())
	keys := make([]string, 0, len(stats))
	for k := range stats {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ordered := "{"
	for i, k := range keys {
		if i > 0 {
			ordered += ", "
		}
		ordered += fmt.Sprintf("%q: %d", k, stats[k])
	}
	ordered += "}"
	fmt.Fprintln(os.Stderr, ordered)
	if *statsFlag != "" {
		os.WriteFile(*statsFlag, []byte(ordered+"\n"), 0o644)
	}
	if *skippedFlag != "" {
		var sb strings.Builder
		for _, s := range skipped {
			r, _ := rel(s)
			sb.WriteString(r + "\n")
		}
		os.WriteFile(*skippedFlag, []byte(sb.String()), 0o644)
	}
}
