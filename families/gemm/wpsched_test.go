package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// A model of gemm_dec_wp's stage ring: the producer issues the rounds in
// order (a round past the first D waits for its stage's empty phase), a
// round's copies land any time after they are issued, and the two
// consumers run the kernel's loop (rounds c, c + 2, ...; a steady state of
// two rounds an iteration, then the peeled tail) with the full-barrier
// wait the hardware has: it names the phase by parity only. Random
// interleavings of every agent and every landing must never let a
// consumer read a stage that does not hold its round, never deadlock, and
// consume every round once.

type wpSched struct {
	D, nr       int
	full, empty []int // completed phases per stage
	holds       []int // the round whose copies last landed in each stage (-1: none)
	inFlight    []int // issued rounds not landed yet, in issue order
	consumed    []int // per round: how many times a consumer started it
	fault       string
}

// parityWait is mbarrier.try_wait.parity for phase n on a barrier with k
// completed phases: it passes once the current phase's parity differs.
func parityWait(k, n int) bool { return k%2 != n%2 }

// wpConsumerOps is the kernel's consumer loop for consumer c over nr
// rounds: ("start", r) waits for round r and issues its ops, ("finish", r)
// folds it and releases its stage.
func wpConsumerOps(c, nr int) [][2]int {
	const start, finish = 0, 1
	var ops [][2]int
	r := c
	if r >= nr {
		return nil
	}
	ops = append(ops, [2]int{start, r})
	for ; r+4 < nr; r += 4 {
		ops = append(ops, [2]int{start, r + 2}, [2]int{finish, r}, [2]int{start, r + 4}, [2]int{finish, r + 2})
	}
	if r+2 < nr {
		ops = append(ops, [2]int{start, r + 2}, [2]int{finish, r}, [2]int{finish, r + 2})
	} else {
		ops = append(ops, [2]int{finish, r})
	}
	return ops
}

// run plays one random interleaving; it returns "" or what went wrong.
func (m *wpSched) run(rng *rand.Rand, lag float64) string {
	m.full, m.empty, m.holds, m.consumed = make([]int, m.D), make([]int, m.D), make([]int, m.D), make([]int, m.nr)
	for i := range m.holds {
		m.holds[i] = -1
	}
	next := 0 // the producer's next round
	cons := [2][][2]int{wpConsumerOps(0, m.nr), wpConsumerOps(1, m.nr)}
	pc := [2]int{}
	for {
		type move func()
		var moves []move
		// The oldest landing of each stage may land (a stage's copies land in issue order).
		seen := map[int]bool{}
		for i, r := range m.inFlight {
			if s := r % m.D; !seen[s] {
				seen[s] = true
				i, r := i, r
				moves = append(moves, func() {
					m.holds[r%m.D] = r
					m.full[r%m.D]++
					m.inFlight = append(m.inFlight[:i:i], m.inFlight[i+1:]...)
				})
			}
		}
		if next < m.nr {
			r := next
			if r < m.D || parityWait(m.empty[r%m.D], r/m.D-1) {
				moves = append(moves, func() {
					if r >= m.D && m.empty[r%m.D] != r/m.D {
						m.fault = fmt.Sprintf("producer passed the empty wait of round %d with %d phases completed", r, m.empty[r%m.D])
					}
					m.inFlight = append(m.inFlight, r)
					next++
				})
			}
		}
		for c := range 2 {
			if pc[c] == len(cons[c]) {
				continue
			}
			op, r := cons[c][pc[c]][0], cons[c][pc[c]][1]
			s := r % m.D
			if op == 0 && !parityWait(m.full[s], r/m.D) {
				continue
			}
			c := c
			moves = append(moves, func() {
				switch {
				case op == 0 && m.holds[s] != r:
					m.fault = fmt.Sprintf("consumer %d started round %d but stage %d holds round %d (%d phases completed)", c, r, s, m.holds[s], m.full[s])
				case op == 0:
					m.consumed[r]++
				case m.holds[s] != r:
					m.fault = fmt.Sprintf("consumer %d folded round %d after stage %d was refilled with round %d", c, r, s, m.holds[s])
				default:
					m.empty[s]++
				}
				pc[c]++
			})
		}
		if len(moves) == 0 {
			break
		}
		// Landings come first in the list; a run that holds them back
		// (lag near 1) lets the agents run far ahead of the copies.
		if nl := len(seen); nl > 0 && nl < len(moves) && rng.Float64() < lag {
			moves = moves[nl:]
		}
		moves[rng.IntN(len(moves))]()
		if m.fault != "" {
			return m.fault
		}
	}
	if next < m.nr || pc[0] < len(cons[0]) || pc[1] < len(cons[1]) {
		return fmt.Sprintf("deadlock: producer at round %d of %d, consumers at ops %d/%d and %d/%d", next, m.nr, pc[0], len(cons[0]), pc[1], len(cons[1]))
	}
	for r, n := range m.consumed {
		if n != 1 {
			return fmt.Sprintf("round %d consumed %d times", r, n)
		}
	}
	return ""
}

func TestWPStageRing(t *testing.T) {
	for _, g := range decWPGeom {
		if g.D%2 != 0 || g.D < 3 {
			t.Errorf("%+v: the ring needs an even D of at least 3 (gemm.hip's static asserts)", g)
		}
	}
	for D := 3; D <= 9; D++ {
		t.Run(fmt.Sprintf("D=%d", D), func(t *testing.T) {
			found := ""
			for nr := 1; nr <= 3*D+5; nr++ {
				for seed := range uint64(60) {
					m := &wpSched{D: D, nr: nr}
					rng := rand.New(rand.NewPCG(seed, uint64(nr)))
					if f := m.run(rng, rng.Float64()); f != "" && found == "" {
						found = fmt.Sprintf("nr=%d seed=%d: %s", nr, seed, f)
					}
				}
			}
			switch {
			case D%2 == 0 && found != "":
				t.Errorf("even D: %s", found)
			case D%2 == 1 && found == "":
				t.Errorf("odd D: no interleaving read a stale stage; the model cannot see the parity aliasing the kernel's even-D assert prevents")
			}
		})
	}
}
