package registry

import (
	"slices"
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

// TestAllCacheInvalidatedAndOwned: an Add after All shows in the next
// All, in order, and a caller that writes into All's slice changes no
// later listing.
func TestAllCacheInvalidatedAndOwned(t *testing.T) {
	r := New[string]("widget")
	r.Add("b", "B")
	first := r.All()
	first[0] = "clobbered"
	r.Add("a", "A")
	if got := r.All(); len(got) != 2 || got[0] != "A" || got[1] != "B" {
		t.Fatalf("All after a second Add = %v, want [A B]", got)
	}
}

// TestFilter keeps the accepted entries in name order, and may call back
// into the registry from keep.
func TestFilter(t *testing.T) {
	r := New[int]("widget")
	for i, n := range []string{"d", "a", "c", "b"} {
		r.Add(n, i)
	}
	got := r.Filter(func(v int) bool {
		_, ok := r.Get("a") // a lookup from inside keep must not deadlock
		return ok && v != 2
	})
	if want := []int{1, 3, 0}; !slices.Equal(got, want) {
		t.Fatalf("Filter = %v, want %v (a, b, d in name order)", got, want)
	}
}
