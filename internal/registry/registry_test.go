package registry

import (
	"strings"
	"testing"
)

func TestOrderLookupAndDuplicate(t *testing.T) {
	r := New[int]("widget")
	for i, n := range []string{"c", "a", "b"} {
		r.Add(n, i)
	}
	if got := r.All(); len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 0 {
		t.Fatalf("All = %v, want name order [1 2 0]", got)
	}
	if v, ok := r.Get("b"); !ok || v != 2 {
		t.Fatalf("Get(b) = %v, %v", v, ok)
	}
	if _, ok := r.Get("zz"); ok {
		t.Fatal("Get of an unregistered name succeeded")
	}
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "duplicate widget a") {
			t.Fatalf("duplicate Add: panic %q, want one naming the widget", msg)
		}
	}()
	r.Add("a", 9)
}
