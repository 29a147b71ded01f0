package gen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// isoMillis is the one spelling of a night's archive.
var isoMillis = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// datesOf reads how the documents of an archive are dated, for check:
// (DatesNight, day) when every time (documents' and messages' createdAt,
// receipts' signed_at) is spelled as isoMillis and lies from 6 hours
// before the claimed day to the end of the next one, the messages of a
// conversation in order from its createdAt on, and each receipt signed
// after its conversation's times; (DatesSpread, "") otherwise. An archive
// with no time at all is dated either way: the claim is returned.
func datesOf(docs []*tdoc, claim Dates, claimDay string) (Dates, string) {
	day, err := time.Parse(time.DateOnly, claimDay)
	from, to := day.Add(-6*time.Hour), day.AddDate(0, 0, 2)
	night, any := err == nil, false
	at := func(raw json.RawMessage) (time.Time, bool) {
		if isNull(raw) {
			return time.Time{}, false
		}
		any = true
		s := str(raw)
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || !isoMillis.MatchString(s) || t.Before(from) || !t.Before(to) {
			night = false
		}
		return t, true
	}
	for _, d := range docs {
		last, _ := at(d.doc["createdAt"])
		var ms []map[string]json.RawMessage
		json.Unmarshal(d.doc["messages"], &ms)
		for _, m := range ms {
			if t, ok := at(m["createdAt"]); ok {
				if t.Before(last) {
					night = false
				}
				last = t
			}
		}
		var rc struct {
			SignedAt json.RawMessage `json:"signed_at"`
		}
		if json.Unmarshal(d.doc["consensusReceipt"], &rc) == nil {
			if t, ok := at(rc.SignedAt); ok && !t.After(last) {
				night = false
			}
		}
	}
	switch {
	case !any:
		return claim, claimDay
	case night:
		return DatesNight, claimDay
	}
	return DatesSpread, ""
}

// usageDays counts the messages with usage by the UTC day of their time
// (the message's createdAt, else the document's; "" when neither), as the
// usage table dates them.
func usageDays(t *testing.T, docs []*tdoc) map[string]int64 {
	t.Helper()
	days := map[string]int64{}
	for _, d := range docs {
		var ms []map[string]json.RawMessage
		json.Unmarshal(d.doc["messages"], &ms)
		for _, m := range ms {
			if m["tokens"] == nil {
				continue
			}
			raw := m["createdAt"]
			if isNull(raw) {
				raw = d.doc["createdAt"]
			}
			day := ""
			if !isNull(raw) {
				// Go's parser wants T and Z and no leap second.
				s := strings.Replace(strings.ToUpper(str(raw)), ":60", ":59", 1)
				tm, err := time.Parse(time.RFC3339Nano, s)
				if err != nil {
					t.Fatalf("createdAt %s: %v", raw, err)
				}
				day = tm.UTC().Format(time.DateOnly)
			}
			days[day]++
		}
	}
	return days
}

// TestDates: a default archive is a night's (its usage on two or three
// days, nearly every message with usage dated), one with faults or
// DatesSpread spreads over a hundred days and more with a fifth undated;
// Day moves a night's archive. (check, in the other tests, confirms the
// Dates of every archive it reads.)
func TestDates(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  Options
		dates Dates
		day   string
	}{
		{"default", Options{Conversations: 300, Seed: 1}, DatesNight, "2026-11-29"},
		{"another day", Options{Conversations: 300, Seed: 2, Day: time.Date(2027, 2, 28, 13, 0, 0, 0, time.FixedZone("x", -5*3600))}, DatesNight, "2027-02-28"},
		{"faults", Options{Conversations: 300, Seed: 3, Faults: 0.05}, DatesSpread, ""},
		{"spread, no faults", Options{Conversations: 300, Seed: 4, Dates: DatesSpread}, DatesSpread, ""},
		{"night with faults", Options{Conversations: 300, Seed: 5, Faults: 0.2, Dates: DatesNight, MaxDocBytes: 1 << 20}, DatesNight, "2026-11-29"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // independent archives (issue 45 item 14)
			data, e := gen(t, tc.opts)
			maxDoc := tc.opts.MaxDocBytes
			if maxDoc == 0 {
				maxDoc = DefaultMaxDocBytes
			}
			docs := read(t, data, maxDoc).docList
			if d, day := datesOf(docs, e.Dates, e.Day); e.Dates != tc.dates || e.Day != tc.day || d != tc.dates || day != tc.day {
				t.Fatalf("dates %q, day %q, read as %q, %q; want %q, %q", e.Dates, e.Day, d, day, tc.dates, tc.day)
			}
			days := usageDays(t, docs)
			var all int64
			for _, n := range days {
				all += n
			}
			undated := float64(days[""]) / float64(all)
			dated := len(days)
			if days[""] > 0 {
				dated--
			}
			t.Logf("%d messages with usage over %d days, %.1f%% undated", all, dated, 100*undated)
			if tc.dates == DatesNight {
				if dated > 3 || undated > 0.03 {
					t.Errorf("a night's archive: usage over %d days, %.1f%% undated: %v", dated, 100*undated, days)
				}
				if days[tc.day] < all/2 {
					t.Errorf("less than half of the usage on %s: %v", tc.day, days)
				}
			} else if dated < 100 || undated < 0.1 {
				t.Errorf("the spread: usage over %d days, %.1f%% undated", dated, 100*undated)
			}
		})
	}
	if _, err := Generate(&bytes.Buffer{}, Options{Conversations: 1, Dates: "tomorrow"}); err == nil {
		t.Error("Dates \"tomorrow\" accepted")
	}
}

// TestNightsDates: each file of a set of nights is dated on its night's
// day, one day after the last, its evidence documents too.
func TestNightsDates(t *testing.T) {
	dir := t.TempDir()
	ne, err := WriteNights(dir, NightsOptions{Nights: 3, FilesPerNight: 2, Conversations: 60, Seed: 8, Day: time.Date(2026, 12, 30, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if ne.Dates != DatesNight {
		t.Fatalf("dates %q", ne.Dates)
	}
	want := []string{"2026-12-30", "2026-12-30", "2026-12-31", "2026-12-31", "2027-01-01", "2027-01-01"}
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	for i, f := range ne.Files {
		if f.Day != want[i] {
			t.Errorf("%s: day %q, want %q", f.Path, f.Day, want[i])
		}
		raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		data, err := dec.DecodeAll(raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		docs := read(t, data, DefaultMaxDocBytes).docList
		if d, day := datesOf(docs, DatesNight, f.Day); d != DatesNight || day != f.Day {
			t.Errorf("%s: times are not those of a night on %s", f.Path, f.Day)
		}
		evidence := 0
		for _, d := range docs {
			if len(d.id) > 3 && d.id[:3] == "ev-" {
				evidence++
				if got, _ := datesOf([]*tdoc{d}, DatesNight, f.Day); got != DatesNight {
					t.Errorf("%s: evidence %s dated %s", f.Path, d.id, d.doc["createdAt"])
				}
			}
		}
		if evidence != evidencePerFile {
			t.Errorf("%s: %d evidence documents", f.Path, evidence)
		}
	}
	spread, err := WriteNights(t.TempDir(), NightsOptions{Nights: 2, FilesPerNight: 1, Conversations: 50, Seed: 8, Faults: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if spread.Dates != DatesSpread || spread.Files[0].Day != "" {
		t.Errorf("with faults: dates %q, day %q", spread.Dates, spread.Files[0].Day)
	}
}
