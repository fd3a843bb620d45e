package results

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Case names one case of a gate by what it is, never by how it was drawn:
// an ordered list of labels such as shape, mode, M, distribution, kernel,
// split and launch. A gate metric measured per case has the key
// Case.Key(metric):
//
//	rel{shape=qkv,mode=decode,M=24,dist=normal,kernel=pq_gemm_dec_m32,S=3,launch=plain}
//
// The key is the same in every run of the same gate, so two results files
// share their keys and diff line by line. A seed is never a label: it
// differs between runs. It is a value, recorded per case in
// GateRecord.CaseSeeds under Case.String().
type Case struct{ labels []Label }

// Label is one name=value part of a Case.
type Label struct{ Name, Value string }

// NewCase returns a case of alternating label names and values:
// NewCase("shape", "qkv", "M", 24).
func NewCase(kv ...any) Case {
	var c Case
	for i := 0; i+1 < len(kv); i += 2 {
		c = c.With(fmt.Sprint(kv[i]), kv[i+1])
	}
	if len(kv)%2 != 0 {
		c = c.With(fmt.Sprint(kv[len(kv)-1]), "")
	}
	return c
}

// With returns c with one more label (c itself is not changed, so one
// case can be the stem of several).
func (c Case) With(name string, value any) Case {
	out := Case{labels: make([]Label, len(c.labels), len(c.labels)+1)}
	copy(out.labels, c.labels)
	out.labels = append(out.labels, Label{name, fmt.Sprint(value)})
	return out
}

// Labels returns the labels in order.
func (c Case) Labels() []Label { return append([]Label(nil), c.labels...) }

// Get returns the value of the label called name and whether there is one.
func (c Case) Get(name string) (string, bool) {
	for _, l := range c.labels {
		if l.Name == name {
			return l.Value, true
		}
	}
	return "", false
}

// String is "name=value,name=value" in label order ("" for no labels).
func (c Case) String() string {
	parts := make([]string, len(c.labels))
	for i, l := range c.labels {
		parts[i] = l.Name + "=" + l.Value
	}
	return strings.Join(parts, ",")
}

// Key is the metric key of metric measured on case c: "metric{labels}",
// or the bare metric name for a case without labels.
func (c Case) Key(metric string) string {
	if len(c.labels) == 0 {
		return metric
	}
	return metric + "{" + c.String() + "}"
}

// ErrMetricKey is the error CheckMetricKey and ParseMetricKey wrap.
var ErrMetricKey = errors.New("results: bad metric key")

// ParseMetricKey splits a key into its metric name and case. A key without
// braces is a metric of no case.
func ParseMetricKey(key string) (metric string, c Case, err error) {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		if strings.ContainsAny(key, "}") {
			return "", Case{}, fmt.Errorf("%w %q: a '}' without '{'", ErrMetricKey, key)
		}
		return key, Case{}, nil
	}
	if !strings.HasSuffix(key, "}") || open == 0 {
		return "", Case{}, fmt.Errorf("%w %q: want metric{name=value,...}", ErrMetricKey, key)
	}
	metric, body := key[:open], key[open+1:len(key)-1]
	if body == "" {
		return "", Case{}, fmt.Errorf("%w %q: empty braces", ErrMetricKey, key)
	}
	for _, part := range strings.Split(body, ",") {
		name, value, ok := strings.Cut(part, "=")
		if !ok || name == "" {
			return "", Case{}, fmt.Errorf("%w %q: label %q is not name=value", ErrMetricKey, key, part)
		}
		c.labels = append(c.labels, Label{name, value})
	}
	return metric, c, nil
}

// seedDigits is the shortest run of digits CheckMetricKey takes for a
// seed: seeds are 64-bit (up to 20 digits); the numbers a case is named by
// (M, K, N, a split) have at most 6.
const seedDigits = 10

// CheckMetricKey returns an error wrapping ErrMetricKey if key cannot be
// parsed back (a label value holding ',', '=', '{', '}' or a space), or
// carries a seed: a label or word "seed", or a run of 10 or more digits.
// Such a key differs from run to run, so two results files would share
// none of it.
func CheckMetricKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty", ErrMetricKey)
	}
	if strings.Contains(strings.ToLower(key), "seed") {
		return fmt.Errorf("%w %q: it names a seed; a seed is a value (GateRecord.CaseSeeds), not part of a key", ErrMetricKey, key)
	}
	run := 0
	for _, r := range key {
		if unicode.IsSpace(r) {
			return fmt.Errorf("%w %q: it holds whitespace", ErrMetricKey, key)
		}
		if r >= '0' && r <= '9' {
			if run++; run >= seedDigits {
				return fmt.Errorf("%w %q: a run of %d+ digits looks like a seed; a seed is a value (GateRecord.CaseSeeds), not part of a key", ErrMetricKey, key, seedDigits)
			}
		} else {
			run = 0
		}
	}
	metric, c, err := ParseMetricKey(key)
	if err != nil {
		return err
	}
	if back := c.Key(metric); back != key {
		return fmt.Errorf("%w %q: it reads back as %q (a label value holds ',', '=', '{' or '}')", ErrMetricKey, key, back)
	}
	for _, l := range c.labels {
		if strings.ContainsAny(l.Value, ",={}") {
			return fmt.Errorf("%w %q: label %s's value %q holds ',', '=', '{' or '}'", ErrMetricKey, key, l.Name, l.Value)
		}
	}
	return nil
}
