package gen

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// A set of files (WriteNights) is what a nightly job sees over several
// nights: each night adds FilesPerNight archives. Every file also writes a
// few evidence documents (small conversations whose ids start with "ev-"),
// and its receipts reference, besides documents of their own file, the
// evidence documents of other files: of the same night, of earlier nights
// and of later ones. A receipt whose evidence is in a later night is
// incomplete (transcript-missing) until that night's files are in the run.

// evidencePerFile is the number of evidence documents each file of a set
// writes; crossRate is the probability that a receipt that is not forced
// (see crossFile.must) references one evidence document of another file.
const (
	evidencePerFile = 3
	crossRate       = 0.25
)

// MinNightsConversations is the smallest NightsOptions.Conversations: a
// file needs a receipt for each of its forced cross-file references.
const MinNightsConversations = 50

// evidenceStream is the second PCG word of evidence documents.
const evidenceStream = 0x65766964656e6365 // "evidence"

// evidenceDoc is a document written by one file of a set and referenced by
// receipts of others.
type evidenceDoc struct {
	id   string
	file int // index in the set's files, night by night (f = (night-1)*F + i)
	// night and path are those of the file that writes the document; a
	// document of night Nights+1 is not written by this set but by the
	// set of the same seed with one more night.
	night    int
	path     string
	line     []byte
	messages int64
	sum      [32]byte
}

// crossFile is what one file of a set knows about the others.
type crossFile struct {
	name string
	keys *keySet
	// host are the evidence documents this file writes, spread over it.
	host []*evidenceDoc
	// pool are the other files' evidence documents.
	pool []*evidenceDoc
	// must are the evidence documents that the first receipts of this
	// file reference, one each, with no tamper.
	must []*evidenceDoc
}

// crossReceipt is a receipt of a file of a set, with the reasons that do
// not depend on the other files and its references to them.
type crossReceipt struct {
	re            ReceiptExpect // statuses not filled in
	with, without uint32
	stmtInvalid   int64
	ext           []*evidenceDoc
}

// hostEvidence writes the next evidence document of a file of a set when
// the documents written reach its slot (evenly spread over the
// conversations); it reports whether it wrote one.
func (g *generator) hostEvidence() bool {
	c := g.opts.cross
	if g.nextHost >= len(c.host) {
		return false
	}
	slot := int64(g.nextHost+1) * int64(g.opts.Conversations) / int64(len(c.host)+1)
	if g.exp.Documents < slot {
		return false
	}
	ev := c.host[g.nextHost]
	g.nextHost++
	g.exp.Documents++
	g.exp.Messages += ev.messages
	g.push(&pend{data: append([]byte(nil), ev.line...)})
	return true
}

// NightsOptions controls WriteNights.
type NightsOptions struct {
	// Nights (at least 1) and FilesPerNight (1 to 26) shape the set.
	Nights, FilesPerNight int
	// Conversations is the number of documents of each file (at least
	// MinNightsConversations), its evidence documents included.
	Conversations int
	// Seed selects the set; each file has a seed derived from it and its
	// place, and every file uses the keyring of Seed.
	Seed uint64
	// Faults, Tamper, MaxDocBytes and Dates apply to every file, as in
	// Options.
	Faults, Tamper float64
	MaxDocBytes    int64
	Dates          Dates
	// Day is the UTC day of night 1 in a set of night's archives
	// (DatesNight), night N's the day N-1 days later; the zero time means
	// DefaultDay (ReceiptsDay with ProfileReceipts).
	Day time.Time
	// Profile is ProfileDefault ("" too) or ProfileReceipts (every
	// document a receipt, see generateReceipts; no faults, no tamper). A
	// set of the receipts profile also gets DIR/rotated.keys.json
	// (RotatedKeysName), and its expect.json lists no receipts
	// (ReceiptList and CrossFile empty: a million of them, 30 times, would
	// not fit), only their counts; each file's .expect.json lists its own.
	Profile Profile
}

// NightsFile is one file of a set.
type NightsFile struct {
	// Night counts from 1.
	Night int `json:"night"`
	// Path is relative to the set's directory, with forward slashes:
	// night-N/a.jsonl.zst, night-N/b.jsonl.zst, ...
	Path string `json:"path"`
	// Seed is the file's own seed (Options.Seed).
	Seed uint64 `json:"seed"`
	// Day is the UTC day (YYYY-MM-DD) of the file's times with
	// DatesNight, "" with DatesSpread.
	Day string `json:"day,omitempty"`
}

// NightsExpect is what WriteNights writes to DIR/expect.json.
type NightsExpect struct {
	Seed          uint64 `json:"seed"`
	Nights        int    `json:"nights"`
	FilesPerNight int    `json:"files_per_night"`
	// Dates is the files' Dates: night or spread.
	Dates Dates `json:"dates"`
	// Keys is the keyring of every file, relative to the set's
	// directory (keys.json).
	Keys string `json:"keys"`
	// Files lists the files in run order: by night, then by name (also
	// the lexical order of their paths).
	Files []NightsFile `json:"files"`
	// All is the expectation of one run over every file, in Files order:
	// counts summed over the files, receipts resolved against every file
	// (ReceiptList entries carry their File). Usage costs are the sums of
	// the files' sums, which may differ in the last bits from a running
	// sum over all messages.
	All *Expect `json:"all"`
	// Through[k-1] is the expectation of one run over the files of
	// nights 1 to k; Through[Nights-1] equals All.
	Through []*Expect `json:"through"`
	// CrossFile lists every receipt that references a document of
	// another file, with its verdict after each night.
	CrossFile []CrossReceipt `json:"cross_file"`
}

// CrossReceipt is a receipt referencing documents of other files.
type CrossReceipt struct {
	File           string `json:"file"`
	Night          int    `json:"night"`
	Line           int64  `json:"line"`
	ConversationID string `json:"conversation_id"`
	// Evidence lists the referenced documents of other files.
	Evidence []CrossEvidence `json:"evidence"`
	// StatusAfter[k-1] and ReasonsAfter[k-1] are the receipt's verdict
	// (with the keyring) in a run over nights 1 to k, for k from the
	// receipt's night on; earlier entries are "".
	StatusAfter  []string   `json:"status_after"`
	ReasonsAfter [][]string `json:"reasons_after"`
	// Tamper is as in ReceiptExpect.
	Tamper string `json:"tamper,omitempty"`
}

// CrossEvidence names a document of another file. Night may be the set's
// Nights+1: that file is not in the set, it is the one the set of the same
// options with one more night writes at File (same path while Nights keeps
// its number of digits).
type CrossEvidence struct {
	ID    string `json:"id"`
	File  string `json:"file"`
	Night int    `json:"night"`
}

// nightsFileResult is one generated file of a set.
type nightsFileResult struct {
	NightsFile
	exp      *Expect
	receipts []crossReceipt
}

// NightsFiles returns the files of a set without writing them.
func NightsFiles(opts NightsOptions) []NightsFile {
	return nightsFiles(opts, opts.Nights, len(strconv.Itoa(opts.Nights)))
}

// nightsFiles returns the files of nights 1 to nights of the set of opts,
// their night numbers padded to width digits. A file's seed and day
// depend on opts.Seed, opts.Day, its night and its letter only, never on
// opts.Nights: the first k nights of any set of one seed are the same.
func nightsFiles(opts NightsOptions, nights, width int) []NightsFile {
	dates, _ := resolveDates(opts.Dates, opts.Faults)
	var files []NightsFile
	for n := 1; n <= nights; n++ {
		for i := 0; i < opts.FilesPerNight; i++ {
			nf := NightsFile{
				Night: n,
				Path:  fmt.Sprintf("night-%0*d/%c.jsonl.zst", width, n, 'a'+i),
				Seed:  mix(opts.Seed ^ mix(uint64(n)<<8|uint64(i)) ^ evidenceStream),
			}
			if dates == DatesNight {
				nf.Day = nightDay(opts.Day, n).Format(time.DateOnly)
			}
			files = append(files, nf)
		}
	}
	return files
}

// nightDay returns the UTC day of night n (from 1) of a set whose first
// night is day (DefaultDay when zero).
func nightDay(day time.Time, n int) time.Time {
	return time.UnixMilli(dayMillis(day)).UTC().AddDate(0, 0, n-1)
}

// WriteNights writes a set of files under dir: for each night N,
// dir/night-N/a.jsonl.zst, b.jsonl.zst, ... each with its .expect.json
// (the file run alone: its references to other files are
// transcript-missing), the keyring dir/keys.json shared by every file,
// and dir/expect.json (NightsExpect). The same options give the same
// bytes.
//
// Besides the references of a single archive, each file's first receipts
// reference, with no tamper, one evidence document each: of the next
// night (so a receipt of night N is incomplete after night N and valid
// after night N+1), of another file of the same night, and of the
// previous night, where these exist; and a quarter of the other receipts
// reference an evidence document of any other file of nights 1 to N+1.
//
// Night N+1 always exists in this sense, the last night's included: its
// evidence documents are those the set of the same options with one more
// night writes, so the last night's forced references stay incomplete
// (transcript-missing) in this set. A file thus never depends on
// opts.Nights: the files of nights 1 to k (archives and .expect.json) are
// byte for byte the same in every set of the same options with at least k
// nights, and one more night can be simulated by writing the set again
// with Nights+1 and running its last night. Only their paths change, when
// Nights gains a digit (night-9 and night-09, see NightsFiles).
func WriteNights(dir string, opts NightsOptions) (*NightsExpect, error) {
	switch {
	case opts.Nights < 1:
		return nil, fmt.Errorf("gen: Nights %d: want at least 1", opts.Nights)
	case opts.FilesPerNight < 1 || opts.FilesPerNight > 26:
		return nil, fmt.Errorf("gen: FilesPerNight %d: want 1 to 26", opts.FilesPerNight)
	case opts.Nights*opts.FilesPerNight < 2:
		return nil, errors.New("gen: a set needs at least two files")
	case opts.Conversations < MinNightsConversations:
		return nil, fmt.Errorf("gen: Conversations %d: want at least %d per file", opts.Conversations, MinNightsConversations)
	case opts.Profile != "" && opts.Profile != ProfileDefault && opts.Profile != ProfileReceipts:
		return nil, fmt.Errorf("gen: profile %q: a set of nights takes default or receipts", opts.Profile)
	}
	receiptsProfile := opts.Profile == ProfileReceipts
	if receiptsProfile && opts.Day.IsZero() {
		opts.Day = ReceiptsDay
	}
	dates, err := resolveDates(opts.Dates, opts.Faults)
	if err != nil {
		return nil, err
	}
	opts.Dates = dates
	files := NightsFiles(opts)
	// The evidence of night Nights+1 too, which the last night references
	// (see above).
	withNext := nightsFiles(opts, opts.Nights+1, len(strconv.Itoa(opts.Nights)))
	keys := newKeySet(opts.Seed)
	evidence := make([][]*evidenceDoc, len(withNext))
	for f, nf := range withNext {
		var day int64 // spread
		if dates == DatesNight {
			day = nightDay(opts.Day, nf.Night).UnixMilli()
		}
		for k := 0; k < evidencePerFile; k++ {
			ev, err := newEvidence(opts.Seed, f, k, day)
			if err != nil {
				return nil, err
			}
			ev.night, ev.path = nf.Night, nf.Path
			evidence[f] = append(evidence[f], ev)
		}
	}
	F := opts.FilesPerNight
	results := make([]nightsFileResult, len(files))
	// The files of the receipts profile are written side by side (each
	// signs in a single goroutine); the default profile signs on workers.
	par := 1
	if receiptsProfile {
		par = max(1, runtime.GOMAXPROCS(0))
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	errs := make([]error, len(files))
	for f, nf := range files {
		c := &crossFile{name: nf.Path, keys: keys, host: evidence[f]}
		n, i := nf.Night, f%F
		c.must = append(c.must, evidence[n*F+(i+1)%F][0])
		if F > 1 {
			c.must = append(c.must, evidence[(n-1)*F+(i+1)%F][1])
		}
		if n > 1 {
			c.must = append(c.must, evidence[(n-2)*F+i][2])
		}
		// The pool holds the files of nights 1 to n+1 only, so that it
		// does not depend on opts.Nights.
		for o := range (n + 1) * F {
			if o != f {
				c.pool = append(c.pool, evidence[o]...)
			}
		}
		o := Options{
			Conversations: opts.Conversations, Seed: nf.Seed, Faults: opts.Faults, Tamper: opts.Tamper,
			MaxDocBytes: opts.MaxDocBytes, Dates: dates, Day: nightDay(opts.Day, n), cross: c, Profile: opts.Profile,
		}
		path := filepath.Join(dir, filepath.FromSlash(nf.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			exp, rcpts, err := writeFile(path, o)
			if err != nil {
				errs[f] = err
				return
			}
			if receiptsProfile {
				exp.ReceiptList = nil // in the file's .expect.json already; a million otherwise held
			}
			results[f] = nightsFileResult{NightsFile: nf, exp: exp, receipts: rcpts}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	ne := &NightsExpect{Seed: opts.Seed, Nights: opts.Nights, FilesPerNight: F, Dates: dates, Keys: "keys.json", Files: files}
	for n := 1; n <= opts.Nights; n++ {
		e := combine(results, n, opts.Seed, !receiptsProfile)
		e.Dates = dates
		ne.Through = append(ne.Through, e)
	}
	ne.All = ne.Through[opts.Nights-1]
	ne.CrossFile = []CrossReceipt{}
	if !receiptsProfile {
		ne.CrossFile = crossList(results, opts.Nights)
	}
	if receiptsProfile {
		rk, err := keys.rotatedKeyring(opts.Day, opts.Nights)
		if err != nil {
			return nil, err
		}
		if err := writeAtomic(filepath.Join(dir, RotatedKeysName), func(f *os.File) error {
			_, err := f.Write(rk)
			return err
		}); err != nil {
			return nil, err
		}
	}
	kj, err := keys.keyringJSON()
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(dir, "keys.json"), func(f *os.File) error {
		_, err := f.Write(kj)
		return err
	}); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(ne, "", "  ")
	if err != nil {
		return nil, err
	}
	data = append(data, '\n')
	err = writeAtomic(filepath.Join(dir, "expect.json"), func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ne, nil
}

// newEvidence returns the k-th evidence document of file f: a
// conversation of 2 to 4 user and assistant messages, sometimes a title,
// always a createdAt (on the day starting at day, Unix ms, in a night's
// archive; the spread's when day is 0), no extension.
func newEvidence(seed uint64, f, k int, day int64) (*evidenceDoc, error) {
	r := rand.New(rand.NewPCG(seed^mix(uint64(f)<<8|uint64(k)), evidenceStream))
	id := string(appendHex64([]byte("ev-"), mix(seed+uint64(f)*evidencePerFile+uint64(k))))
	var d, m objBuilder
	d.str("id", id)
	if r.IntN(2) == 0 {
		d.str("title", titles[r.IntN(len(titles))])
	}
	d.key("createdAt")
	d.buf = append(d.buf, '"')
	if day != 0 {
		c := newClock(seed^mix(uint64(f)<<8|uint64(k)), day)
		c.start()
		d.buf = appendISO(d.buf, c.t)
	} else {
		d.buf = appendTime(d.buf, r)
	}
	d.buf = append(d.buf, '"')
	d.end()
	n := 2 + r.IntN(3)
	d.key("messages")
	d.buf = append(d.buf, '[')
	for i := 0; i < n; i++ {
		m.reset()
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		m.str("role", role)
		m.key("content")
		m.buf = append(m.buf, '"')
		m.buf = appendText(m.buf, r, 1+r.IntN(6))
		m.buf = append(m.buf, '"')
		m.end()
		if i > 0 {
			d.buf = append(d.buf, ',')
		}
		d.buf = m.appendTo(d.buf, r)
	}
	d.buf = append(d.buf, ']')
	d.end()
	ev := &evidenceDoc{id: id, file: f, line: d.appendTo(nil, r), messages: int64(n)}
	var ok bool
	if ev.sum, ok = transcriptHash(ev.line); !ok {
		return nil, fmt.Errorf("gen: internal: evidence document %s has no transcript hash", id)
	}
	return ev, nil
}

// combine returns the expectation of one run over the files of nights 1
// to through; its ReceiptList stays empty unless list.
func combine(files []nightsFileResult, through int, seed uint64, list bool) *Expect {
	e := &Expect{
		Seed: seed, RejectsByReason: map[string]int64{}, Warnings: map[string]int64{}, ExtensionsUnknown: map[string]int64{},
		Usage:               UsageTotals{ByProvider: map[string]UsageSum{}, ByAgent: map[string]UsageSum{}},
		Receipts:            ReceiptTotals{Reasons: map[string]int64{}},
		ReceiptsWithoutKeys: ReceiptTotals{Reasons: map[string]int64{}},
		ReceiptList:         []ReceiptExpect{},
	}
	addMap := func(dst, src map[string]int64) {
		for k, v := range src {
			dst[k] += v
		}
	}
	addUsage := func(dst, src map[string]UsageSum) {
		for k, v := range src {
			s := dst[k]
			s.Messages += v.Messages
			s.TokensInput += v.TokensInput
			s.TokensOutput += v.TokensOutput
			s.Cost += v.Cost
			dst[k] = s
		}
	}
	for _, fr := range files {
		if fr.Night > through {
			break
		}
		x := fr.exp
		e.MaxDocBytes = x.MaxDocBytes
		e.Lines += x.Lines
		e.Documents += x.Documents
		e.Rejects += x.Rejects
		e.Blank += x.Blank
		e.BytesIn += x.BytesIn
		e.Messages += x.Messages
		e.Tools.Calls += x.Tools.Calls
		e.Tools.Results += x.Tools.Results
		e.Tools.Orphans += x.Tools.Orphans
		e.Tools.Unanswered += x.Tools.Unanswered
		e.Images.Messages += x.Images.Messages
		e.Images.Bytes += x.Images.Bytes
		e.Transcripts.Hashed += x.Transcripts.Hashed
		e.Transcripts.Unhashable += x.Transcripts.Unhashable
		addMap(e.RejectsByReason, x.RejectsByReason)
		addMap(e.Warnings, x.Warnings)
		addMap(e.ExtensionsUnknown, x.ExtensionsUnknown)
		addUsage(e.Usage.ByProvider, x.Usage.ByProvider)
		addUsage(e.Usage.ByAgent, x.Usage.ByAgent)
		for _, rc := range fr.receipts {
			re := rc.re
			re.File = fr.Path
			with, without := rc.with, rc.without
			for _, ev := range rc.ext {
				if ev.night > through {
					with |= 1 << rsTranscriptMissing
					without |= 1 << rsTranscriptMissing
				}
			}
			re.Status, re.Reasons = tallyReceipt(&e.Receipts, with, rc.stmtInvalid)
			re.StatusWithoutKeys, re.ReasonsWithoutKeys = tallyReceipt(&e.ReceiptsWithoutKeys, without, rc.stmtInvalid)
			if list {
				e.ReceiptList = append(e.ReceiptList, re)
			}
		}
	}
	return e
}

// crossList lists the receipts that reference other files, with their
// verdict after each night.
func crossList(files []nightsFileResult, nights int) []CrossReceipt {
	list := []CrossReceipt{}
	for _, fr := range files {
		for _, rc := range fr.receipts {
			if len(rc.ext) == 0 {
				continue
			}
			cr := CrossReceipt{
				File: fr.Path, Night: fr.Night, Line: rc.re.Line, ConversationID: rc.re.ConversationID, Tamper: rc.re.Tamper,
				StatusAfter: make([]string, nights), ReasonsAfter: make([][]string, nights),
			}
			for _, ev := range rc.ext {
				cr.Evidence = append(cr.Evidence, CrossEvidence{ID: ev.id, File: ev.path, Night: ev.night})
			}
			for k := fr.Night; k <= nights; k++ {
				with := rc.with
				for _, ev := range rc.ext {
					if ev.night > k {
						with |= 1 << rsTranscriptMissing
					}
				}
				var t ReceiptTotals
				t.Reasons = map[string]int64{}
				cr.StatusAfter[k-1], cr.ReasonsAfter[k-1] = tallyReceipt(&t, with, 0)
			}
			list = append(list, cr)
		}
	}
	return list
}
