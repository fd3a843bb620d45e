// Package classes gathers the launch classes one gate case reaches: the
// union, over every code arch the build produces, of the classes of each
// kernel that runs the case there. The families' coverage covers (the
// cheapest cases that reach every class of the domain) are built on it.
package classes

import (
	"github.com/parharness/parharness/internal/coverage"
	"github.com/parharness/parharness/kernels"
)

// Union is the union over kernels.CodeArchs of of(k) for every kernel
// that kernelsOn(arch) returns; of returns nil for a kernel the case does
// not run.
func Union(kernelsOn func(arch string) []kernels.Kernel, of func(k kernels.Kernel) []string) []string {
	var lists [][]string
	for _, arch := range kernels.CodeArchs {
		for _, k := range kernelsOn(arch) {
			if cls := of(k); cls != nil {
				lists = append(lists, cls)
			}
		}
	}
	return coverage.Union(lists...)
}
