package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// A model of gemm_dec_wp's stage ring: the producer issues the rounds in
// order (a round past the first D waits for its stage's empty phase), a
// round's copies land any time after they are issued, and the C
// consumers run the kernel's loop (rounds c, c + C, ...; pipelined, a
// steady state of two rounds an iteration, then the peeled tail, as two
// consumers run it; else one round at a time, as three run it) with the full-barrier wait the
// hardware has: it names the phase by parity only. Random
// interleavings of every agent and every landing must never let a
// consumer read a stage that does not hold its round, never deadlock, and
// consume every round once.

type wpSched struct {
	D, C, nr    int
	pipe        bool  // the consumers' pipelined loop (DWP_PIPE, two consumers)
	full, empty []int // completed phases per stage
	holds       []int // the round whose copies last landed in each stage (-1: none)
	inFlight    []int // issued rounds not landed yet, in issue order
	consumed    []int // per round: how many times a consumer started it
	fault       string
}

// parityWait is mbarrier.try_wait.parity for phase n on a barrier with k
// completed phases: it passes once the current phase's parity differs.
func parityWait(k, n int) bool { return k%2 != n%2 }

// wpConsumerOps is the kernel's consumer loop for consumer c of C over
// nr rounds: ("start", r) waits for round r and issues its ops,
// ("finish", r) folds it and releases its stage. pipe: the pipelined
// loop (two consumers), else one round at a time (three).
func wpConsumerOps(c, C, nr int, pipe bool) [][2]int {
	const start, finish = 0, 1
	var ops [][2]int
	r := c
	if r >= nr {
		return nil
	}
	if !pipe {
		for ; r < nr; r += C {
			ops = append(ops, [2]int{start, r}, [2]int{finish, r})
		}
		return ops
	}
	ops = append(ops, [2]int{start, r})
	for ; r+2*C < nr; r += 2 * C {
		ops = append(ops, [2]int{start, r + C}, [2]int{finish, r}, [2]int{start, r + 2*C}, [2]int{finish, r + C})
	}
	if r+C < nr {
		ops = append(ops, [2]int{start, r + C}, [2]int{finish, r}, [2]int{finish, r + C})
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
	cons := make([][][2]int, m.C)
	for c := range cons {
		cons[c] = wpConsumerOps(c, m.C, m.nr, m.pipe)
	}
	pc := make([]int, m.C)
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
		for c := range m.C {
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
	for c := range m.C {
		if next < m.nr || pc[c] < len(cons[c]) {
			return fmt.Sprintf("deadlock: producer at round %d of %d, consumer %d at op %d of %d", next, m.nr, c, pc[c], len(cons[c]))
		}
	}
	for r, n := range m.consumed {
		if n != 1 {
			return fmt.Sprintf("round %d consumed %d times", r, n)
		}
	}
	return ""
}

func TestWPStageRing(t *testing.T) {
	for name, g := range decWPGeom {
		if g.D%g.C != 0 || g.D <= g.C {
			t.Errorf("%s %+v: the ring needs D a multiple of C and larger than C (gemm.hip's static asserts)", name, g)
		}
	}
	for _, loop := range []struct {
		C    int
		pipe bool
	}{{2, true}, {3, false}} {
		C := loop.C
		for D := C + 1; D <= 4*C+1; D++ {
			t.Run(fmt.Sprintf("C=%d/pipe=%t/D=%d", C, loop.pipe, D), func(t *testing.T) {
				found := ""
				for nr := 1; nr <= 3*D+5; nr++ {
					for seed := range uint64(60) {
						m := &wpSched{D: D, C: C, nr: nr, pipe: loop.pipe}
						rng := rand.New(rand.NewPCG(seed, uint64(nr)))
						if f := m.run(rng, rng.Float64()); f != "" && found == "" {
							found = fmt.Sprintf("nr=%d seed=%d: %s", nr, seed, f)
						}
					}
				}
				switch {
				case D%C == 0 && found != "":
					t.Errorf("D a multiple of C: %s", found)
				case D%C != 0 && found == "":
					t.Errorf("D not a multiple of C: no interleaving read a stale stage; the model cannot see the parity aliasing the kernel's D %% C assert prevents")
				}
			})
		}
	}
}
