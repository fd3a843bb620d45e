// Package coverage derives test cases from launch-geometry classes: a
// family names the classes each candidate case exercises (from its launch
// functions), and Cover adds the cheapest candidates until every class any
// candidate reaches is exercised. A gate's quick cases are then its chosen
// base cases plus what Cover adds, so a new geometry (a new split count, a
// new block shape) gets a case without anyone picking it.
package coverage

import (
	"slices"
	"sort"
	"strings"
)

// Classes is the set of class names one case exercises.
type Classes func(i int) []string

// Cover returns the indices of candidates to add to base (indices into
// candidates) so that every class reached by any candidate is reached by
// base or an added one. Candidates are taken cheapest first (ties: lower
// index), each added only if it reaches a class not yet reached, so the
// result is deterministic. It also returns every reachable class, sorted.
func Cover(base []int, n int, classes Classes, cost func(i int) float64) (added []int, reachable []string) {
	covered := map[string]bool{}
	for _, i := range base {
		for _, c := range classes(i) {
			covered[c] = true
		}
	}
	order := make([]int, n)
	all := map[string]bool{}
	cls := make([][]string, n)
	for i := range order {
		order[i] = i
		cls[i] = classes(i)
		for _, c := range cls[i] {
			all[c] = true
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return cost(order[a]) < cost(order[b]) })
	for _, i := range order {
		fresh := false
		for _, c := range cls[i] {
			if !covered[c] {
				fresh = true
				break
			}
		}
		if !fresh || slices.Contains(base, i) {
			continue
		}
		added = append(added, i)
		for _, c := range cls[i] {
			covered[c] = true
		}
	}
	for c := range all {
		reachable = append(reachable, c)
	}
	sort.Strings(reachable)
	return added, reachable
}

// Missing returns the classes in want that no case in have reaches.
func Missing(want []string, have [][]string) []string {
	got := map[string]bool{}
	for _, cs := range have {
		for _, c := range cs {
			got[c] = true
		}
	}
	var out []string
	for _, c := range want {
		if !got[c] {
			out = append(out, c)
		}
	}
	return out
}

// Extend is Cover over values: the cases of domain to add to base, the
// cheapest first, so that base and the added cases reach every class any
// case of base or domain reaches. Each added case is passed through mark
// (with its rank among the added) before it is returned, so a caller can
// vary what Cover does not choose (an input distribution, say).
func Extend[T any](base, domain []T, classes func(T) []string, cost func(T) float64, mark func(rank int, c T) T) []T {
	all := append(append([]T{}, base...), domain...)
	idx := make([]int, len(base))
	for i := range idx {
		idx[i] = i
	}
	added, _ := Cover(idx, len(all), func(i int) []string { return classes(all[i]) }, func(i int) float64 { return cost(all[i]) })
	out := make([]T, 0, len(added))
	for j, i := range added {
		out = append(out, mark(j, all[i]))
	}
	return out
}

// Union is the classes of several launches, each once, in first-seen
// order.
func Union(lists ...[]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lists {
		for _, c := range l {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// Reachable is every class some case of domain reaches, sorted: the
// classes a suite must cover, enumerated from the launch functions
// independently of how the suite's cases are chosen.
func Reachable[T any](domain []T, classes func(T) []string) []string {
	out := Union(Of(domain, classes)...)
	slices.Sort(out)
	return out
}

// Of is each case's classes, in case order (the have of Missing).
func Of[T any](cases []T, classes func(T) []string) [][]string {
	out := make([][]string, len(cases))
	for i, c := range cases {
		out[i] = classes(c)
	}
	return out
}

// Unnamed returns the substrings of names that no class in have contains:
// the classes a test requires by name (a known escape) that no case runs.
func Unnamed(have [][]string, names ...string) []string {
	var out []string
	for _, n := range names {
		found := false
		for _, cs := range have {
			for _, cl := range cs {
				found = found || strings.Contains(cl, n)
			}
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}
