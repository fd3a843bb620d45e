// The commands: Main parses flags, opens the
// device, runs gates and benches from their registries, and writes tables
// and results JSON. main only calls Main, so tests drive the commands
// directly with their own writers.
//
// Exit codes: 0 every selected gate passed (SKIPs allowed unless
// --require-device), 1 a gate failed (or hung), 2 the command could not run
// (usage, environment).

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/parharness/parharness/internal/textutil"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitFail  = 1
	ExitUsage = 2
)

// usageError is a problem with the command line or environment (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

type command struct {
	name  string
	usage string
	run   func(args []string, stdout, stderr io.Writer) (int, error)
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

// Main runs one parharness command and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return ExitUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || (args[0] == "help" && len(args) == 1) {
		printUsage(stdout)
		return ExitOK
	}
	if args[0] == "help" { // help CMD [SUITE]: CMD's flags, as CMD -h prints them
		args = append(append([]string{}, args[1:]...), "-h")
	}
	c, ok := commands[args[0]]
	if ok && slices.ContainsFunc(args[1:], isHelpFlag) {
		// Asked for: the command's usage and flags on stdout, exit 0.
		fmt.Fprintf(stdout, "parharness %s: %s\n", c.name, c.usage)
		_, err := c.run(args[1:], stdout, stdout)
		if err == nil || errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		fmt.Fprintf(stderr, "parharness %s: %v\n", c.name, err)
		return ExitUsage
	}
	if !ok {
		fmt.Fprintf(stderr, "parharness: unknown command %q\n", args[0])
		printUsage(stderr)
		return ExitUsage
	}
	code, err := c.run(args[1:], stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "parharness %s: %v\n", c.name, err)
		var ue usageError
		if errors.As(err, &ue) || errors.Is(err, flag.ErrHelp) {
			return ExitUsage
		}
		if code == ExitOK {
			code = ExitUsage
		}
	}
	return code
}

func isHelpFlag(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: parharness COMMAND [flags]")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].usage)
	}
	fmt.Fprintln(w, "Run `parharness COMMAND -h` for a command's flags.")
}

// newFlags returns a FlagSet that reports errors instead of exiting.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("parharness "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return checkFlags(fs)
}

// checkFlags refuses, before any device work, flag values that would
// otherwise fail late or silently: a negative duration, an unknown backend,
// an explicitly given --build or --checkpoint that is not a usable
// directory, a --json whose directory cannot be written, fewer than 4 reps.
func checkFlags(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil {
			return
		}
		g, ok := f.Value.(flag.Getter)
		if !ok {
			return
		}
		switch v := g.Get().(type) {
		case time.Duration:
			if v < 0 {
				err = usagef("--%s %v: a duration cannot be negative", f.Name, v)
			}
		case string:
			err = checkStringFlag(f.Name, v, set[f.Name])
		case int:
			if f.Name == "reps" && v < 4 {
				err = usagef("--reps %d: the A/B protocol needs at least 4 timed replays per variant", v)
			}
		}
	})
	return err
}

func checkStringFlag(name, v string, explicit bool) error {
	switch {
	case name == "backend":
		if !slices.Contains([]string{"auto", "cuda", "hip", "none"}, v) {
			return usagef("--backend %q: use auto, cuda, hip or none", v)
		}
	case name == "build" && explicit:
		ok := false
		for _, a := range []string{"sm_90a", "gfx1201"} {
			if fi, err := os.Stat(filepath.Join(v, a)); err == nil && fi.IsDir() {
				ok = true
			}
		}
		if !ok {
			return usagef("--build %s: no sm_90a/ or gfx1201/ code objects there (run `make kernels`, or point at the build directory)", v)
		}
	case name == "checkpoint" && v != "":
		if fi, err := os.Stat(v); err != nil || !fi.IsDir() {
			return usagef("--checkpoint %s: not a directory", v)
		}
	case name == "json" && v != "":
		dir := filepath.Dir(v)
		f, err := os.CreateTemp(dir, ".parharness-write-check-*")
		if err != nil {
			return usagef("--json %s: its directory cannot be written (%v)", v, err)
		}
		f.Close()
		os.Remove(f.Name())
	}
	return nil
}

// toolVersion returns the module version and VCS revision embedded by go build.
func toolVersion() (version, commit string) {
	version, commit = "devel", "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	if bi.Main.Version != "" {
		version = bi.Main.Version
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty {
		commit += "-dirty"
	}
	return
}

// defaultBuildDir finds build/ next to the working directory or the binary.
func defaultBuildDir() string {
	if st, err := os.Stat("build"); err == nil && st.IsDir() {
		return "build"
	}
	if exe, err := os.Executable(); err == nil {
		d := filepath.Join(filepath.Dir(exe), "..", "build")
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return "build"
}

// table is a person-readable boxed table that fits the width of w
// (textutil.Width: the terminal's, at most 100 columns into a pipe or a
// file), headers as written.
type table struct {
	w io.Writer
	t textutil.Table
}

func newTable(w io.Writer) *table { return &table{w: w} }

// Header sets the column names.
func (t *table) Header(names ...string) { t.t.Header = names }

// Append adds a row.
func (t *table) Append(cells ...any) { t.t.Append(cells...) }

// Shrink names the free-text columns, narrowed (wrapped) first.
func (t *table) Shrink(cols ...int) *table { t.t.Shrink = cols; return t }

// Lines caps the lines a wrapped cell takes (negative: no cap).
func (t *table) Lines(n int) *table { t.t.MaxLines = n; return t }

// Align sets the columns' alignment.
func (t *table) Align(a ...tw.Align) *table { t.t.Align = a; return t }

// Render writes the table to its writer, fitted to its width.
func (t *table) Render() {
	if err := t.t.Render(t.w, textutil.Width(t.w)); err != nil {
		fmt.Fprintf(t.w, "(table not rendered: %v)\n", err)
	}
}

// onInterrupt runs save when SIGINT or SIGTERM arrives (Ctrl-C, a
// scheduler's time limit), then exits 130 or 143: what was measured is
// written, marked partial, instead of lost. The returned function stops
// listening.
func onInterrupt(stderr io.Writer, save func(reason string)) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			name, code := "SIGINT", 130
			if sig == syscall.SIGTERM {
				name, code = "SIGTERM", 143
			}
			fmt.Fprintf(stderr, "parharness: %s: writing what was measured, marked partial\n", name)
			save("interrupted by " + name)
			os.Exit(code)
		case <-done:
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { signal.Stop(ch); close(done) }) }
}

// cpuProfileFlag adds --cpuprofile to a command that runs on the device.
func cpuProfileFlag(fs *flag.FlagSet) *string {
	return fs.String("cpuprofile", "", "write a Go CPU profile of the whole command to this file (`go tool pprof` reads it): where the host time goes (references, checks, transfers, waits in the driver)")
}

// startCPUProfile starts a CPU profile into path ("" starts none). A file
// that cannot be created is a usage error, reported before any device
// work. stop ends the profile and closes the file; it may be called more
// than once, so the interrupt and watchdog paths, which exit the process,
// can flush the profile before they do.
func startCPUProfile(path string, stderr io.Writer) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usagef("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, usagef("--cpuprofile %s: %v", path, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fmt.Fprintf(stderr, "parharness: --cpuprofile %s: %v\n", path, err)
			}
		})
	}, nil
}

func init() {
	register(command{name: "version", usage: "print the module version, commit, Go version and build settings", run: runVersion})
}

// runVersion prints what built this binary: the module version and commit
// (what results files record), the Go version and the build settings.
func runVersion(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("version", stderr)
	if err := parse(fs, args); err != nil {
		return ExitUsage, err
	}
	version, commit := toolVersion()
	fmt.Fprintf(stdout, "parharness %s\ncommit     %s\ngo         %s %s/%s\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if !strings.HasPrefix(s.Key, "vcs.") {
				fmt.Fprintf(stdout, "build      %s=%s\n", s.Key, s.Value)
			}
		}
	}
	return ExitOK, nil
}
