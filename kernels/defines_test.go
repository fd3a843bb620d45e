package kernels

import (
	"fmt"
	"go/constant"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parharness/parharness/refimpl"
)

// kernelDefines evaluates the integer #defines of a kernel source: each
// value is a constant expression over numbers (u suffixes allowed) and the
// defines before it. Defines that are not integer expressions are left out.
func kernelDefines(t *testing.T, module string) map[string]int64 {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "hipsrc", module+".hip"))
	if err != nil {
		t.Fatal(err)
	}
	def := regexp.MustCompile(`(?m)^#define ([A-Z_][A-Z0-9_]*) (.+)$`)
	unsigned := regexp.MustCompile(`\b(\d+)u\b`)
	vals := map[string]int64{}
	for _, m := range def.FindAllStringSubmatch(string(src), -1) {
		body, _, _ := strings.Cut(m[2], "//") // a trailing comment
		expr := unsigned.ReplaceAllString(strings.TrimSpace(body), "$1")
		expr = regexp.MustCompile(`\b[A-Z_][A-Z0-9_]*\b`).ReplaceAllStringFunc(expr, func(name string) string {
			if v, ok := vals[name]; ok {
				return fmt.Sprint(v)
			}
			return name
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

// Every Go constant that mirrors a kernel #define equals it: a change on
// one side must reach the other (geometry, shared-memory sizes, the
// producers' K limit).
func TestGoConstantsMatchKernelDefines(t *testing.T) {
	for _, c := range []struct {
		module, name string
		want         int64
	}{
		{"gemm", "GROUP", Group},
		{"gemm", "DEC_BN", DecBN},
		{"gemm", "DEC_WARPS", DecThreads / 32},
		{"gemm", "PRE_BM", PreBM},
		{"gemm", "PRE_BN", PreBN},
		{"gemm", "PRE_THREADS", PreThreads},
		{"gemm", "PW_STAGES", preWGStages},
		{"gemm", "PW_STAGE_BYTES", preWGStageBytes},
		{"gemm", "PW_THREADS", preWGThreads},
		{"gemm", "PW_SMEM", preWGShared},
		{"producers", "GROUP", Group},
		{"producers", "KROT", refimpl.DefaultKrot},
		{"producers", "WARPS", ProducerWarps},
		{"producers", "MAXK", ProducerMaxK},
	} {
		got, ok := kernelDefines(t, c.module)[c.name]
		if !ok {
			t.Errorf("hipsrc/%s.hip: no integer #define %s", c.module, c.name)
			continue
		}
		if got != c.want {
			t.Errorf("%s is %d in hipsrc/%s.hip, %d on the Go side", c.name, got, c.module, c.want)
		}
	}
}
