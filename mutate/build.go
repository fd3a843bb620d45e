package mutate

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Target is a code arch the build produces: the Makefile variable holding
// its clang flags, its object extension and the sources' target macro.
type Target struct {
	Name    string // "sm_90a"
	MakeVar string // "NVFLAGS"
	Ext     string // ".ptx"
	Arch    Arch
}

// Targets are the code archs a mutant can be built for.
var Targets = []Target{
	{Name: "sm_90a", MakeVar: "NVFLAGS", Ext: ".ptx", Arch: ArchNV},
	{Name: "gfx1201", MakeVar: "AMDFLAGS", Ext: ".co", Arch: ArchAMD},
}

// TargetByName finds a target.
func TargetByName(name string) (Target, error) {
	for _, t := range Targets {
		if t.Name == name {
			return t, nil
		}
	}
	var names []string
	for _, t := range Targets {
		names = append(names, t.Name)
	}
	return Target{}, fmt.Errorf("unknown target %q (targets: %s)", name, strings.Join(names, ", "))
}

// MakeVar prints a variable of the Makefile in root, the way
// scripts/broken-variant.sh reads the build's flags.
func MakeVar(ctx context.Context, root, name string) (string, error) {
	cmd := exec.CommandContext(ctx, "make", "-s", "--no-print-directory", "--eval=print-%: ; @echo $($*)", "print-"+name)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("reading the Makefile's %s in %s: %v: %s", name, root, err, strings.TrimSpace(stderr.String()))
	}
	v := strings.TrimSpace(string(out))
	if v == "" {
		return "", fmt.Errorf("the Makefile in %s has no %s (or it is empty)", root, name)
	}
	return v, nil
}

// BuildConfig says how to build the mutants.
type BuildConfig struct {
	Root    string            // repository root: the Makefile, hipsrc/, the sources
	Out     string            // the mutant directory written
	Clang   string            // the compiler (the Makefile's CLANG)
	Flags   map[string]string // target name -> the Makefile's flags for it
	Targets []Target
	Modules []string // every module source (the Makefile's SRC), relative to Root
	Jobs    int      // compiles at once (0: the CPU count)
	Log     io.Writer
}

// Build compiles every mutant for every target and writes Out/manifest.json
// and each changed object as Out/<id>/<target>/<module><ext>.gz. The
// unmutated modules are compiled the same way first (the reference a
// mutant's object is compared with, and whose hashes the run checks
// against the build it runs on).
func Build(ctx context.Context, cfg BuildConfig, ms []Mutant, m *Manifest) error {
	if cfg.Jobs <= 0 {
		cfg.Jobs = runtime.NumCPU()
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return err
	}
	cfg.Root = root
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "parharness-mutate-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	mods, err := moduleGraph(cfg)
	if err != nil {
		return err
	}
	m.Modules = mods
	base := map[string][]byte{} // target/module -> object
	var mu sync.Mutex
	type job struct {
		t   Target
		mod Module
	}
	var jobs []job
	for _, t := range cfg.Targets {
		for _, mod := range mods {
			jobs = append(jobs, job{t, mod})
		}
	}
	err = parallel(ctx, cfg.Jobs, len(jobs), func(i int) error {
		j := jobs[i]
		dir := filepath.Join(work, "base", j.t.Name, j.mod.Name)
		obj, msg, err := compile(ctx, cfg, j.t, j.mod, dir, "", nil)
		if err != nil {
			return err
		}
		if obj == nil {
			return fmt.Errorf("the unmutated module %s does not build for %s: %s (run `make kernels` to see)", j.mod.Source, j.t.Name, msg)
		}
		mu.Lock()
		base[j.t.Name+"/"+j.mod.Name] = obj
		mu.Unlock()
		return nil
	})
	if err != nil {
		return err
	}
	for i := range m.Modules {
		m.Modules[i].SHA256 = map[string]string{}
		for _, t := range cfg.Targets {
			m.Modules[i].SHA256[t.Name] = sha(base[t.Name+"/"+m.Modules[i].Name])
		}
	}

	m.Mutants = make([]BuiltMutant, len(ms))
	var done int
	err = parallel(ctx, cfg.Jobs, len(ms), func(i int) error {
		bm, err := buildOne(ctx, cfg, work, mods, base, ms[i])
		if err != nil {
			return err
		}
		m.Mutants[i] = bm
		mu.Lock()
		done++
		fmt.Fprintf(cfg.Log, "[%d/%d] %-44s %s%s\n", done, len(ms), bm.ID, bm.Build, suffix(bm.Error))
		mu.Unlock()
		return nil
	})
	if err != nil {
		return err
	}
	return WriteManifest(filepath.Join(cfg.Out, ManifestName), m)
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

// buildOne compiles one mutant's modules for every target.
func buildOne(ctx context.Context, cfg BuildConfig, work string, mods []Module, base map[string][]byte, mu Mutant) (BuiltMutant, error) {
	bm := BuiltMutant{Mutant: mu}
	src, err := os.ReadFile(filepath.Join(cfg.Root, filepath.FromSlash(mu.File)))
	if err != nil {
		return bm, err
	}
	text, err := mu.Apply(src)
	if err != nil {
		return bm, err
	}
	for _, mod := range mods {
		if mod.Source == mu.File || slices.Contains(mod.Deps, mu.File) {
			bm.Modules = append(bm.Modules, mod.Name)
		}
	}
	if len(bm.Modules) == 0 {
		bm.Build, bm.Error = BuildNoModule, fmt.Sprintf("no module of the build compiles %s", mu.File)
		return bm, nil
	}
	for _, t := range cfg.Targets {
		if mu.archSet()&t.Arch == 0 {
			continue // the line is not compiled for this target: the object is the base one
		}
		for _, name := range bm.Modules {
			mod := moduleByName(mods, name)
			dir := filepath.Join(work, "m", mu.ID, t.Name, name)
			obj, msg, err := compile(ctx, cfg, t, mod, dir, mu.File, text)
			if err != nil {
				return bm, err
			}
			if obj == nil {
				bm.Build, bm.Error, bm.Objects = BuildFailed, msg, nil
				return bm, nil
			}
			ref := base[t.Name+"/"+name]
			if bytes.Equal(obj, ref) {
				continue
			}
			o := Object{Path: filepath.ToSlash(filepath.Join(mu.ID, t.Name, name+t.Ext+".gz")), SHA256: sha(obj), Bytes: len(obj)}
			if t.Ext == ".ptx" {
				o.ChangedEntries = changedEntries(ref, obj)
			}
			gz, err := writeGzip(filepath.Join(cfg.Out, filepath.FromSlash(o.Path)), obj)
			if err != nil {
				return bm, err
			}
			o.GzipBytes = gz
			if bm.Objects == nil {
				bm.Objects = map[string]map[string]Object{}
			}
			if bm.Objects[t.Name] == nil {
				bm.Objects[t.Name] = map[string]Object{}
			}
			bm.Objects[t.Name][name] = o
		}
	}
	bm.Build = BuildOK
	if len(bm.Objects) == 0 {
		bm.Build = BuildIdentical
	}
	return bm, nil
}

func (m Mutant) archSet() Arch {
	switch m.Arch {
	case "nvptx":
		return ArchNV
	case "amdgcn":
		return ArchAMD
	}
	return ArchAll
}

func moduleByName(mods []Module, name string) Module {
	for _, m := range mods {
		if m.Name == name {
			return m
		}
	}
	return Module{}
}

// compile builds one module for one target in dir. With mutated set, the
// file mutFile (the module itself or a header it includes) is replaced by
// mutated. It returns the object, or nil and the first error line when the
// compiler refused the source; err is for failures of the machinery.
func compile(ctx context.Context, cfg BuildConfig, t Target, mod Module, dir, mutFile string, mutated []byte) (obj []byte, msg string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	flags := strings.Fields(cfg.Flags[t.Name])
	if len(flags) == 0 {
		return nil, "", fmt.Errorf("no clang flags for target %s", t.Name)
	}
	srcDir := filepath.Dir(filepath.Join(cfg.Root, filepath.FromSlash(mod.Source)))
	input := filepath.Join(cfg.Root, filepath.FromSlash(mod.Source))
	rename := map[string]string{} // temp path -> the file it stands for, in messages
	if mutated != nil {
		if mutFile == mod.Source {
			input = filepath.Join(dir, filepath.Base(mod.Source))
			if err := os.WriteFile(input, mutated, 0o644); err != nil {
				return nil, "", err
			}
			rename[input] = mod.Source
		} else {
			// A header: copy its include root (the -I directory holding it)
			// into dir, mutate the copy, and point that -I flag at it.
			k, root := includeRootOf(flags, mutFile)
			if k < 0 {
				return nil, "", fmt.Errorf("%s is under no -I directory of the %s flags (%s): cannot compile against a mutated copy", mutFile, t.Name, cfg.Flags[t.Name])
			}
			copyRoot := filepath.Join(dir, "inc")
			if err := copyTree(filepath.Join(cfg.Root, filepath.FromSlash(root)), copyRoot); err != nil {
				return nil, "", err
			}
			rel := strings.TrimPrefix(mutFile, root+"/")
			mpath := filepath.Join(copyRoot, filepath.FromSlash(rel))
			if err := os.WriteFile(mpath, mutated, 0o644); err != nil {
				return nil, "", err
			}
			rename[mpath] = mutFile
			flags = slices.Clone(flags)
			flags[k] = "-I" + copyRoot
		}
	}
	out := filepath.Join(dir, "out"+t.Ext)
	args := append(flags, "-I"+srcDir, input, "-o", out)
	cmd := exec.CommandContext(ctx, cfg.Clang, args...)
	cmd.Dir = cfg.Root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, "", fmt.Errorf("running %s: %v", cfg.Clang, err)
		}
		return nil, firstError(stderr.String(), rename), nil
	}
	b, err := os.ReadFile(out)
	return b, "", err
}

// includeRootOf finds the -I flag whose directory holds file.
func includeRootOf(flags []string, file string) (int, string) {
	for i, f := range flags {
		if d, ok := strings.CutPrefix(f, "-I"); ok && d != "" && strings.HasPrefix(file, strings.TrimSuffix(d, "/")+"/") {
			return i, strings.TrimSuffix(d, "/")
		}
	}
	return -1, ""
}

var errorLineRE = regexp.MustCompile(`(?m)^.*\berror\b.*$`)

// firstError is the compiler's first error line, with temporary paths
// replaced by the files they stand for.
func firstError(stderr string, rename map[string]string) string {
	line := errorLineRE.FindString(stderr)
	if line == "" {
		line = strings.TrimSpace(stderr)
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
	}
	for from, to := range rename {
		line = strings.ReplaceAll(line, from, to)
	}
	if line == "" {
		line = "the compiler failed without a message"
	}
	return strings.TrimSpace(line)
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// moduleGraph reads each module's transitive quoted includes, resolved as
// the compiler does: the including file's directory first, then the -I
// directories of the first target's flags, then the module's own directory.
func moduleGraph(cfg BuildConfig) ([]Module, error) {
	if len(cfg.Targets) == 0 {
		return nil, errors.New("no target to build for")
	}
	var incDirs []string
	for _, f := range strings.Fields(cfg.Flags[cfg.Targets[0].Name]) {
		if d, ok := strings.CutPrefix(f, "-I"); ok && d != "" {
			incDirs = append(incDirs, strings.TrimSuffix(d, "/"))
		}
	}
	var out []Module
	for _, src := range cfg.Modules {
		name := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
		deps := map[string]bool{}
		var visit func(file string) error
		visit = func(file string) error {
			b, err := os.ReadFile(filepath.Join(cfg.Root, filepath.FromSlash(file)))
			if err != nil {
				return fmt.Errorf("module %s: %v", src, err)
			}
			for _, inc := range Scan(file, b).Includes {
				dirs := append([]string{pathDir(file)}, incDirs...)
				dirs = append(dirs, pathDir(src))
				for _, d := range dirs {
					cand := pathJoin(d, inc)
					if _, err := os.Stat(filepath.Join(cfg.Root, filepath.FromSlash(cand))); err == nil {
						if !deps[cand] {
							deps[cand] = true
							if err := visit(cand); err != nil {
								return err
							}
						}
						break
					}
				}
			}
			return nil
		}
		if err := visit(src); err != nil {
			return nil, err
		}
		m := Module{Name: name, Source: src}
		for d := range deps {
			m.Deps = append(m.Deps, d)
		}
		sort.Strings(m.Deps)
		out = append(out, m)
	}
	return out, nil
}

func pathDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}

func pathJoin(dir, p string) string {
	return filepath.ToSlash(filepath.Clean(filepath.Join(filepath.FromSlash(dir), filepath.FromSlash(p))))
}

// changedEntries lists the PTX entry points whose text differs between
// two modules (a function's registers are numbered within it, so an entry
// the edit does not reach is byte-identical).
func changedEntries(ref, obj []byte) []string {
	a, b := ptxEntries(ref), ptxEntries(obj)
	var out []string
	for name, body := range b {
		if a[name] != body {
			out = append(out, name)
		}
	}
	for name := range a {
		if _, ok := b[name]; !ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

var entryRE = regexp.MustCompile(`^\.(visible |weak )?\.entry\s+([A-Za-z_$][\w$]*)`)

// ptxEntries splits PTX text into its .entry functions.
func ptxEntries(ptx []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(ptx))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	name := ""
	var body strings.Builder
	flush := func() {
		if name != "" {
			out[name] = body.String()
		}
		body.Reset()
	}
	for sc.Scan() {
		line := sc.Text()
		if m := entryRE.FindStringSubmatch(line); m != nil {
			flush()
			name = m[2]
		} else if strings.HasPrefix(line, ".func") || strings.HasPrefix(line, ".visible .func") {
			flush()
			name = ""
		}
		if name != "" {
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	flush()
	return out
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// writeGzip writes b gzipped (no name or time in the header: the same
// object gives the same bytes) and returns the compressed size.
func writeGzip(path string, b []byte) (int, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return 0, err
	}
	if _, err := zw.Write(b); err != nil {
		return 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return buf.Len(), os.WriteFile(path, buf.Bytes(), 0o644)
}

// readGzip reads a gzipped object.
func readGzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return b, nil
}

// parallel runs fn(0..n-1) on up to jobs goroutines and returns the first
// error (the others still finish their current item).
func parallel(ctx context.Context, jobs, n int, fn func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  int
	)
	for w := 0; w < jobs && w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if first != nil || next >= n || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				i := next
				next++
				mu.Unlock()
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}
