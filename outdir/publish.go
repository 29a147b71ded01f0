package outdir

import "fmt"

// Another writer's inputs, published as the run's: convbeam's publishing
// step has its workers' files of every input, read elsewhere, and commits
// them into OUT as convbatch run commits what it read (issue 44 item 4).
// It stages each input's files as a segment (StartSegment, the segment's
// Txn and AddDoc, EndInput, Seal) and adopts it (Adopt); the run then
// takes every input as finished, as it takes those a killed run sealed,
// and its Commit publishes them with the same journal, manifest, state,
// report and history as a run that read them itself.

// Adopt takes the sealed segment g, staged after OpenRun, as finished:
// its inputs are then Resumed, and the run commits them as it commits the
// segments a killed run left. An input the run already resumes, or one it
// does not read, is refused.
func (r *Run) Adopt(g *SealedSegment) error {
	if g == nil || len(g.Inputs) == 0 {
		return fmt.Errorf("staging: adopt a segment without an input")
	}
	for _, s := range g.Inputs {
		if s.Index < 0 || s.Index >= len(r.seals) {
			return fmt.Errorf("staging: adopt input %d of a run of %d inputs", s.Index, len(r.seals))
		}
		if r.seals[s.Index] != nil {
			return fmt.Errorf("staging: adopt input %d (%s), which the run has sealed already", s.Index, s.Report.Path)
		}
	}
	for _, s := range g.Inputs {
		s.seg = g
		r.seals[s.Index] = s
	}
	return nil
}
