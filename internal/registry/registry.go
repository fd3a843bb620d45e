// Package registry is the by-name table behind the harness's three
// registries: kernels (kernels.Register), gates (gates.Register) and bench
// suites (bench.RegisterSuite). Each registers its entries from init
// functions, so a duplicate name is a programming error and panics at start
// rather than letting one entry silently shadow another; listings come out
// in name order so tables, logs and results JSON are stable across runs.
package registry

import (
	"slices"
	"sort"
	"sync"
)

// Of holds the entries of one registry, keyed by name.
type Of[T any] struct {
	what string // "kernel", "gate", "suite": named in the duplicate panic
	mu   sync.Mutex
	m    map[string]T
	// sorted caches All's order (nil: rebuild): gates select kernels per
	// case and per launch class, too often to sort the registry each time.
	sorted []T
}

// New returns an empty registry whose duplicate panics call its entries what.
func New[T any](what string) *Of[T] {
	return &Of[T]{what: what, m: map[string]T{}}
}

// Add registers v under name; a second entry with the same name panics.
func (r *Of[T]) Add(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		panic("duplicate " + r.what + " " + name)
	}
	r.m[name] = v
	r.sorted = nil
}

// Get returns the entry registered under name.
func (r *Of[T]) Get(name string) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[name]
	return v, ok
}

// All returns every entry in name order, in a slice of the caller's own.
func (r *Of[T]) All() []T { return slices.Clone(r.inOrder()) }

// Filter returns the entries keep accepts, in name order, without
// copying the rest: what a lookup by fields wants on a registry of
// hundreds of large entries.
func (r *Of[T]) Filter(keep func(T) bool) []T {
	var out []T
	for _, v := range r.inOrder() {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// inOrder is the cached name-ordered slice. Add replaces it rather than
// changing it, so a caller may range over it after the lock is released
// (and keep may call back into the registry).
func (r *Of[T]) inOrder() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sorted == nil {
		names := make([]string, 0, len(r.m))
		for n := range r.m {
			names = append(names, n)
		}
		sort.Strings(names)
		r.sorted = make([]T, len(names))
		for i, n := range names {
			r.sorted[i] = r.m[n]
		}
	}
	return r.sorted
}
