// Package cdefs reads the integer #define constants of a kernel source, so
// tests can tie every Go constant that mirrors one (launch geometry,
// shared-memory sizes, limits) to the value the kernel is compiled with.
package cdefs

import (
	"fmt"
	"go/constant"
	"go/token"
	"go/types"
	"regexp"
	"sort"
	"strings"
)

var (
	define   = regexp.MustCompile(`(?m)^#define ([A-Z_][A-Z0-9_]*) (.+)$`)
	unsigned = regexp.MustCompile(`\b(\d+)u\b`)
	name     = regexp.MustCompile(`\b[A-Z_][A-Z0-9_]*\b`)
)

// Ints evaluates the integer #defines of src in order: each value is a
// constant expression over numbers (u suffixes allowed) and the defines
// before it. Defines that are not integer expressions are left out.
func Ints(src []byte) map[string]int64 {
	vals := map[string]int64{}
	for _, m := range define.FindAllStringSubmatch(string(src), -1) {
		body, _, _ := strings.Cut(m[2], "//") // a trailing comment
		expr := unsigned.ReplaceAllString(strings.TrimSpace(body), "$1")
		expr = name.ReplaceAllStringFunc(expr, func(n string) string {
			if v, ok := vals[n]; ok {
				return fmt.Sprint(v)
			}
			return n
		})
		tv, err := types.Eval(token.NewFileSet(), nil, token.NoPos, expr)
		if err != nil || tv.Value == nil || tv.Value.Kind() != constant.Int {
			continue
		}
		if v, ok := constant.Int64Val(tv.Value); ok {
			vals[m[1]] = v
		}
	}
	return vals
}

// Mismatches compares the Go side of a kernel's constants (want: #define
// name -> value) with the source's and describes every difference; file
// names the source in the messages.
func Mismatches(file string, src []byte, want map[string]int64) []string {
	got := Ints(src)
	var out []string
	for _, name := range sortedKeys(want) {
		switch v, ok := got[name]; {
		case !ok:
			out = append(out, fmt.Sprintf("%s: no integer #define %s", file, name))
		case v != want[name]:
			out = append(out, fmt.Sprintf("%s is %d in %s, %d on the Go side", name, v, file, want[name]))
		}
	}
	return out
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
