package mutate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// WriteResults writes a run's results (two-space indent, one trailing
// newline), atomically.
func WriteResults(path string, r *Results) error {
	r.Schema = ResultsSchema
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

// ReadResults reads a run's results file.
func ReadResults(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not a mutate results file: %v", path, err)
	}
	if r.Schema != ResultsSchema {
		return nil, fmt.Errorf("%s: mutate results schema %d, this tool reads %d", path, r.Schema, ResultsSchema)
	}
	return &r, nil
}

// Explanations say why survivors are equivalent mutants: key (a mutant
// ID, or a site FILE:LINE covering every mutant there) -> reason.
type Explanations map[string]string

// ExplanationError is a malformed line of an explanation file.
type ExplanationError struct {
	File string
	Line int
	Msg  string
}

func (e *ExplanationError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// ParseExplanations reads an explanation file: one `KEY REASON` per line,
// KEY a mutant ID or FILE:LINE, REASON the rest of the line; blank lines
// and lines starting with # are ignored. A key given twice or without a
// reason is an error.
func ParseExplanations(name string, data []byte) (Explanations, error) {
	ex := Explanations{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, reason, _ := strings.Cut(line, " ")
		if tab := strings.IndexByte(key, '\t'); tab >= 0 {
			key, reason = key[:tab], key[tab+1:]+" "+reason
		}
		reason = strings.TrimSpace(reason)
		if reason == "" {
			return nil, &ExplanationError{name, n, fmt.Sprintf("%q has no reason: write `KEY why the mutant is equivalent`", key)}
		}
		if _, dup := ex[key]; dup {
			return nil, &ExplanationError{name, n, fmt.Sprintf("%q is explained twice", key)}
		}
		ex[key] = reason
	}
	return ex, sc.Err()
}

// ReadExplanations reads an explanation file; a missing file is none.
func ReadExplanations(path string) (Explanations, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return Explanations{}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseExplanations(path, b)
}

func (e Explanations) forResult(r Result) (string, string, bool) {
	if why, ok := e[r.ID]; ok {
		return r.ID, why, true
	}
	site := r.File + ":" + strconv.Itoa(r.Line)
	why, ok := e[site]
	return site, why, ok
}

// Apply marks the survivors the explanations cover as judged equivalent
// and returns notes on entries that explain a mutant that did not survive
// or match no mutant of the run.
func (e Explanations) Apply(res *Results) []string {
	used := map[string]bool{}
	var notes []string
	for i := range res.Results {
		r := &res.Results[i]
		key, why, ok := e.forResult(*r)
		if !ok {
			continue
		}
		used[key] = true
		switch r.Status {
		case StatusSurvived, StatusJudged:
			r.Status, r.Explanation = StatusJudged, why
		default:
			notes = append(notes, fmt.Sprintf("%s is explained as equivalent (%s) but its status is %s", r.ID, key, r.Status))
		}
	}
	for _, k := range sortedKeys(e) {
		if !used[k] {
			notes = append(notes, fmt.Sprintf("explanation %q matches no mutant of this run (a stale entry?)", k))
		}
	}
	return notes
}

// Summary counts a run's outcomes.
type Summary struct {
	Total        int
	Killed       int
	KilledBy     map[string]int // status -> count, for the killed kinds
	Survived     int
	DidNotBuild  int
	Identical    int
	Judged       int
	NotRun       int
	Inconclusive int
	Pending      int
}

// Summarize counts the statuses.
func Summarize(res *Results) Summary {
	s := Summary{KilledBy: map[string]int{}}
	for _, r := range res.Results {
		s.Total++
		switch {
		case Killed(r.Status):
			s.Killed++
			s.KilledBy[r.Status]++
		case r.Status == StatusSurvived:
			s.Survived++
		case r.Status == StatusDidNotBuild:
			s.DidNotBuild++
		case r.Status == StatusIdentical:
			s.Identical++
		case r.Status == StatusJudged:
			s.Judged++
		case r.Status == StatusNotRun:
			s.NotRun++
		case r.Status == StatusInconclusive:
			s.Inconclusive++
		default:
			s.Pending++
		}
	}
	return s
}

// Ratio is the kill ratio: killed over killed plus survived, that is among
// the mutants that built, changed the code, ran to a verdict and are not
// judged equivalent; ok is false when there are none.
func (s Summary) Ratio() (float64, bool) {
	n := s.Killed + s.Survived
	if n == 0 {
		return 0, false
	}
	return float64(s.Killed) / float64(n), true
}

var killedKinds = []string{StatusKilled, StatusKilledTimeout, StatusKilledFault, StatusKilledCrash, StatusKilledUnrunnable, StatusKilledSanitizer}

// WriteReport writes the run as markdown: the summary, a table of every
// mutant, the survivors with their lines, and the notes.
func WriteReport(w io.Writer, res *Results, notes []string) error {
	var b strings.Builder
	s := Summarize(res)
	fmt.Fprintf(&b, "# Mutation testing on %s: %d mutants\n\n", res.Arch, s.Total)
	fmt.Fprintf(&b, "Tool %s, commit %s, %s. Mutants %s, base build %s, seed %d, %d jobs, timeout %.0f s per gate process.\n",
		res.Tool, res.Commit, res.Date, res.MutantsDir, res.BuildDir, res.Seed, res.Jobs, res.TimeoutS)
	if res.Partial {
		fmt.Fprintf(&b, "\n**Partial run**: %s.\n", res.PartialReason)
	}
	if c := res.Control; c != nil {
		fmt.Fprintf(&b, "\nControl (the unmutated build): %s in %.1f s (%s).\n", clip(oneLine(c.Status), 400), c.Seconds, gateNames(c.Gates))
	}
	if c := res.SanitizerControl; c != nil {
		fmt.Fprintf(&b, "\nSanitizer control (the unmutated build under the sanitizer the sync operators' survivors ran under): %s in %.1f s (%s).\n", clip(oneLine(c.Status), 400), c.Seconds, gateNames(c.Gates))
	}
	b.WriteString("\n## Summary\n\n| outcome | mutants |\n|---|---:|\n")
	fmt.Fprintf(&b, "| killed | %d |\n", s.Killed)
	for _, k := range killedKinds {
		if n := s.KilledBy[k]; n > 0 {
			label := k
			if k == StatusKilled {
				label = "killed (a gate FAILed)"
			}
			fmt.Fprintf(&b, "| &nbsp;&nbsp;%s | %d |\n", label, n)
		}
	}
	for _, row := range []struct {
		name string
		n    int
	}{{StatusSurvived, s.Survived}, {StatusJudged, s.Judged}, {StatusDidNotBuild, s.DidNotBuild}, {StatusIdentical, s.Identical},
		{StatusNotRun, s.NotRun}, {StatusInconclusive, s.Inconclusive}, {StatusPending, s.Pending}} {
		if row.n > 0 || row.name == StatusSurvived || row.name == StatusDidNotBuild || row.name == StatusIdentical {
			fmt.Fprintf(&b, "| %s | %d |\n", row.name, row.n)
		}
	}
	if r, ok := s.Ratio(); ok {
		fmt.Fprintf(&b, "\nKill ratio %d / %d = %.1f%%: killed among the mutants that built, changed the code, ran to a verdict and are not judged equivalent.\n",
			s.Killed, s.Killed+s.Survived, 100*r)
	} else {
		b.WriteString("\nKill ratio: no mutant ran to a verdict.\n")
	}

	b.WriteString("\n## Mutants\n\n| id | operator | file:line | kernel | status | gate | first failure |\n|---|---|---|---|---|---|---|\n")
	for _, r := range res.Results {
		why := r.Failure
		if r.Status == StatusJudged {
			why = r.Explanation
		}
		fmt.Fprintf(&b, "| %s | %s | %s:%d | %s | %s | %s | %s |\n", cell(r.ID), cell(r.Operator), cell(r.File), r.Line,
			cell(kernelCell(r)), cell(r.Status), cell(r.Gate), cell(clip(oneLine(why), 160)))
	}

	var surv []Result
	for _, r := range res.Results {
		if r.Status == StatusSurvived || r.Status == StatusJudged {
			surv = append(surv, r)
		}
	}
	if len(surv) > 0 {
		b.WriteString("\n## Survivors\n\nThe gates passed on each of these. A survivor is a bug class the gates miss, or an equivalent mutant: explain the latter in the explanation file (`ID reason`, or `FILE:LINE reason`).\n")
		for _, r := range surv {
			fmt.Fprintf(&b, "\n### %s\n\n%s at %s:%d in `%s`", r.ID, r.Operator, r.File, r.Line, r.Func)
			if len(r.ChangedEntries) > 0 {
				fmt.Fprintf(&b, " (changed entries: %s)", strings.Join(r.ChangedEntries, ", "))
			}
			fmt.Fprintf(&b, "; gates %s.\n\n```diff\n- %s\n+ %s\n```\n", gateNames(r.Gates), r.Before, r.After)
			if r.Explanation != "" {
				fmt.Fprintf(&b, "\nEquivalent: %s\n", r.Explanation)
			}
		}
	}
	if len(notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// kernelCell is the function of the site and, when it is not itself the
// only changed entry, the entry points its change reached.
func kernelCell(r Result) string {
	if len(r.ChangedEntries) == 0 || (len(r.ChangedEntries) == 1 && r.ChangedEntries[0] == r.Func) {
		return r.Func
	}
	e := r.ChangedEntries
	more := ""
	if len(e) > 3 {
		more = fmt.Sprintf(" +%d", len(e)-3)
		e = e[:3]
	}
	return fmt.Sprintf("%s → %s%s", r.Func, strings.Join(e, ", "), more)
}

// cell escapes a markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
