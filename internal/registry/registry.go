// Package registry is the by-name table behind the harness's three
// registries: kernels (kernels.Register), gates (gates.Register) and bench
// suites (bench.RegisterSuite). Each registers its entries from init
// functions, so a duplicate name is a programming error and panics at start
// rather than letting one entry silently shadow another; listings come out
// in name order so tables, logs and results JSON are stable across runs.
package registry

import "sort"

// Of holds the entries of one registry, keyed by name.
type Of[T any] struct {
	what string // "kernel", "gate", "suite": named in the duplicate panic
	m    map[string]T
}

// New returns an empty registry whose duplicate panics call its entries what.
func New[T any](what string) *Of[T] {
	return &Of[T]{what: what, m: map[string]T{}}
}

// Add registers v under name; a second entry with the same name panics.
func (r *Of[T]) Add(name string, v T) {
	if _, dup := r.m[name]; dup {
		panic("duplicate " + r.what + " " + name)
	}
	r.m[name] = v
}

// Get returns the entry registered under name.
func (r *Of[T]) Get(name string) (T, bool) {
	v, ok := r.m[name]
	return v, ok
}

// All returns every entry in name order.
func (r *Of[T]) All() []T {
	names := make([]string, 0, len(r.m))
	for n := range r.m {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]T, len(names))
	for i, n := range names {
		out[i] = r.m[n]
	}
	return out
}
