package gen

import (
	"bufio"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"
)

// ProfileReceipts writes, in a set of nights only (WriteNights), small
// documents every one of which, but the set's evidence documents, carries
// a signed consensus receipt: the archive of an auditor's bench (issue 43
// item 5), whose cost grows with receipts rather than with bytes. See
// generateReceipts.
const ProfileReceipts Profile = "receipts"

// ReceiptsDay is night 1 of a set of the receipts profile when
// NightsOptions.Day is zero: 30 nights from it end before DefaultDay, so
// that a run today (whose witness time is after every signed_at) never
// finds a signed_at in its future under a format 2 keyring.
var ReceiptsDay = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)

// receiptsStream is the second PCG word of a document of the receipts
// profile (first word: the file's seed, mixed with its index).
const receiptsStream = 0x7263707470726f66 // "rcptprof"

// Agents of the receipts profile: the pool's even agents sign with
// Ed25519, its odd ones with ML-DSA-65 (keys.go). RotatedRevokedAgent is
// the agent whose key rotated.keys.json revokes, RotatedExpiredAgent the
// one whose key it ends mid-way.
const (
	RotatedRevokedAgent = 1 // an ML-DSA-65 agent: in about 1 receipt in 60
	RotatedExpiredAgent = 2 // an Ed25519 agent: in about half the receipts
)

// generateReceipts writes one file of a set of the receipts profile:
// opts.Conversations documents, the set's evidence documents of this file
// (spread over it as hostEvidence spreads them) and, for every other
// document i, a carrying document: a user and an assistant message
// (usage-metadata, agent-context naming its 3 statement agents) with a
// receipt of quorum 2 of 3. Nine receipts in ten are all Ed25519 (envelope
// and 3 distinct even pool agents); one in ten has an ML-DSA-65 envelope
// and one ML-DSA-65 statement (an odd agent) among two Ed25519 ones. Each
// receipt references its own transcript and, as in a set of the default
// profile, the forced evidence documents (crossFile.must, one each for
// the first receipts) and, for a quarter of the others, one evidence
// document of another file of nights 1 to N+1. No tamper and no faults;
// one receipt in ten has one statement whose signature does not verify
// (the quorum still holds).
func generateReceipts(w *bufio.Writer, opts Options, maxDoc int64) (*Expect, []crossReceipt, error) {
	c := opts.cross
	if c == nil {
		return nil, nil, errors.New("gen: the receipts profile writes sets of nights only (--nights)")
	}
	if opts.Faults > 0 || opts.Tamper > 0 || opts.NoReceipts {
		return nil, nil, errors.New("gen: the receipts profile writes no faults, no tampered receipts, and receipts")
	}
	g := &shortGen{w: w, opts: opts, maxDoc: maxDoc, n: uint64(opts.Conversations), line: make([]byte, 0, 64<<10), keys: c.keys}
	g.r = rand.New(&g.pcg)
	g.idSalt = rand.New(rand.NewPCG(opts.Seed, shortPlanStream)).Uint64()
	var cross []crossReceipt
	nextHost, nextMust := 0, 0
	for i := uint64(0); i < g.n; i++ {
		if nextHost < len(c.host) && int64(i) >= int64(nextHost+1)*int64(g.n)/int64(len(c.host)+1) {
			ev := c.host[nextHost]
			nextHost++
			g.line = append(g.line[:0], ev.line...)
			g.exp.Messages += ev.messages
		} else {
			var ext *evidenceDoc
			if nextMust < len(c.must) {
				ext = c.must[nextMust]
				nextMust++
			}
			cr, err := g.receiptDoc(i, ext)
			if err != nil {
				return nil, nil, err
			}
			cr.re.Line = g.exp.Lines + 1
			cross = append(cross, cr)
		}
		g.exp.Lines++
		g.exp.Documents++
		g.exp.BytesIn += int64(len(g.line)) + 1
		g.line = append(g.line, '\n')
		if _, err := g.w.Write(g.line); err != nil {
			return nil, nil, err
		}
	}
	if err := g.w.Flush(); err != nil {
		return nil, nil, err
	}
	g.exp.Receipts.Reasons = map[string]int64{}
	g.exp.ReceiptsWithoutKeys.Reasons = map[string]int64{}
	for _, cr := range cross {
		with, without := cr.with, cr.without
		if len(cr.ext) > 0 {
			// Alone, this file lacks the other files' documents.
			with |= 1 << rsTranscriptMissing
			without |= 1 << rsTranscriptMissing
		}
		re := cr.re
		re.Status, re.Reasons = tallyReceipt(&g.exp.Receipts, with, cr.stmtInvalid)
		re.StatusWithoutKeys, re.ReasonsWithoutKeys = tallyReceipt(&g.exp.ReceiptsWithoutKeys, without, cr.stmtInvalid)
		g.exp.ReceiptList = append(g.exp.ReceiptList, re)
	}
	return g.finish(), cross, nil
}

// receiptDoc writes the carrying document i to g.line; forced, when not
// nil, is the evidence document it must reference.
func (g *shortGen) receiptDoc(i uint64, forced *evidenceDoc) (crossReceipt, error) {
	c := g.opts.cross
	g.pcg.Seed(g.opts.Seed^mix(i), receiptsStream)
	r := g.r
	envAlg := algEd25519
	if r.IntN(10) == 0 {
		envAlg = algMLDSA65
	}
	even := r.Perm(poolAgents / 2)
	stmts := []int{2 * even[0], 2 * even[1], 2 * even[2]}
	if envAlg == algMLDSA65 {
		stmts[r.IntN(3)] = 2*r.IntN(poolAgents/2) + 1
	}
	ext := forced
	if ext == nil && len(c.pool) > 0 && r.Float64() < crossRate {
		ext = c.pool[r.IntN(len(c.pool))]
	}
	seed := r.Uint64()

	b := g.line[:0]
	g.starts = g.starts[:0]
	g.starts = append(g.starts, len(b)+1)
	b = append(b, `{"id":`...)
	b = g.appendID(b, i)
	g.starts = append(g.starts, len(b)+1)
	b = append(b, `,"extensions":["usage-metadata","agent-context","consensus-receipt"]`...)
	g.starts = append(g.starts, len(b)+1)
	b = append(b, `,"agentId":"`...)
	b = append(b, g.keys.agentIDs[stmts[1]]...)
	g.starts = append(g.starts, len(b)+2)
	b = append(b, `","leaderId":"`...)
	b = append(b, g.keys.agentIDs[stmts[0]]...)
	g.starts = append(g.starts, len(b)+2)
	b = append(b, `","messages":[{"role":"user","content":"`...)
	b = append(b, shortTexts[r.IntN(len(shortTexts))]...)
	b = append(b, `"},`...)
	g.exp.Messages++
	b = g.assistant(b, r, stmts[2], true)
	b = append(b, `]}`...)
	g.line = b

	id := g.appendID(nil, i)
	plan := &receiptPlan{
		convID:  string(id[1 : len(id)-1]),
		stmts:   stmts,
		envAlg:  envAlg,
		reserve: receiptReserve(g.keys, stmts, envAlg),
		starts:  g.starts,
		quorum:  2,
	}
	refs := []jobRef{{id: plan.convID, self: true}}
	if ext != nil {
		refs = append(refs, jobRef{id: ext.id, ext: ext})
		if r.IntN(2) == 0 {
			refs[0], refs[1] = refs[1], refs[0]
		}
	}
	j := &receiptJob{
		base: append([]byte(nil), g.line...), plan: plan, refs: refs, tamper: tamperNone, seed: seed,
		keys: g.keys, maxLine: int(g.maxDoc) - 1, done: make(chan struct{}),
		night: g.opts.Dates == DatesNight, day: dayMillis(g.opts.Day),
	}
	j.run()
	if j.err != nil {
		return crossReceipt{}, j.err
	}
	g.line = append(g.line[:0], j.line...)
	cr := crossReceipt{
		re:          ReceiptExpect{ConversationID: plan.convID, Algorithm: algNames[envAlg]},
		stmtInvalid: j.stmtInvalid,
	}
	if ext != nil {
		cr.ext = []*evidenceDoc{ext}
	}
	return cr, nil
}

// RotatedKeysName is the second keyring WriteNights writes for a set of
// the receipts profile, beside keys.json; a run over the directory skips it
// as a sidecar (its name ends in .keys.json).
const RotatedKeysName = "rotated.keys.json"

// rotatedKeyring is keys.json in keyring format 2 (docs/FORMAT.md, "Key
// lifetimes"): the same keys, each with an id; the key of agent
// RotatedRevokedAgent revoked, compromised since 00:00Z of night
// nights/2+1; the key of agent RotatedExpiredAgent valid until 00:00Z of
// that night (not_after); every other key pinned without a window.
func (ks *keySet) rotatedKeyring(day time.Time, nights int) ([]byte, error) {
	type revoked struct {
		At               string `json:"at"`
		Reason           string `json:"reason"`
		CompromisedSince string `json:"compromised_since"`
	}
	type key struct {
		ID        string   `json:"id"`
		Algorithm string   `json:"algorithm"`
		PublicKey string   `json:"public_key"`
		NotAfter  string   `json:"not_after,omitempty"`
		Revoked   *revoked `json:"revoked,omitempty"`
	}
	mid := nightDay(day, nights/2+1)
	kr := struct {
		EnvelopeKeys []key            `json:"envelope_keys"`
		Agents       map[string][]key `json:"agents"`
	}{Agents: map[string][]key{}}
	for i, k := range ks.notaries {
		kr.EnvelopeKeys = append(kr.EnvelopeKeys, key{ID: "notary-" + string(rune('1'+i)), Algorithm: algNames[k.alg], PublicKey: k.pubB64})
	}
	for i, id := range ks.agentIDs {
		k := ks.agentKeys[i]
		e := key{ID: id + "-k1", Algorithm: algNames[k.alg], PublicKey: k.pubB64}
		switch i {
		case RotatedRevokedAgent:
			e.Revoked = &revoked{
				At: mid.AddDate(0, 0, 1).Format(time.RFC3339), Reason: "key compromise",
				CompromisedSince: mid.Format(time.RFC3339),
			}
		case RotatedExpiredAgent:
			e.NotAfter = mid.Format(time.RFC3339)
		}
		kr.Agents[id] = []key{e}
	}
	b, err := json.MarshalIndent(&kr, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
