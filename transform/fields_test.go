package transform

import (
	"testing"

	"github.com/convbatch/convbatch/jsonscan"
	"github.com/convbatch/convbatch/stream"
)

// TestIndexObjectMatchesLookup checks that the member index gives, for
// every field, the token Tape.Lookup finds.
func TestIndexObjectMatchesLookup(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		obj       int32
	}{
		{"empty", `{}`, 0},
		{"root", `{"id":"a","messages":[],"extensions":null,"title":"t","createdAt":"x","other":1}`, 0},
		{"message", `{"role":"user","content":"hi","tokens":{"input":1},"cost":0.1,"provider":"p","agentId":"a","kind":"text","id":"m","createdAt":null,"toolCallId":"c","toolCalls":[]}`, 0},
		{"escaped names", `{"r\u006fle":"user","\u0069d":"x","prov\/ider":1,"provider":2}`, 0},
		{"not an object", `["role","user"]`, 0},
		{"nested object", `{"a":{"role":"x","kind":"y"},"role":"z"}`, 2},
		{"scalar", `{"a":1}`, 2},
		{"absent token", `{"a":1}`, -1},
		{"repeated name, first wins", `{"role":"a","role":"b"}`, 0},
		{"unknown names only", `{"Role":1,"roles":2,"ids":3,"":4}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tape jsonscan.Tape
			if err := tape.ParseKeepDuplicates([]byte(tc.doc), 0); err != nil {
				t.Fatal(err)
			}
			var m members
			var scratch []byte
			indexObject(&tape, tc.obj, &m, &scratch)
			for f := field(0); f < numFields; f++ {
				if got, want := m.get(f), tape.Lookup(tc.obj, fieldNames[f]); got != want {
					t.Errorf("%s: index %d, Lookup %d", fieldNames[f], got, want)
				}
			}
		})
	}
}

// TestFieldOf checks that every field name maps to its field and other
// names to none.
func TestFieldOf(t *testing.T) {
	for f := field(0); f < numFields; f++ {
		if got := fieldOf([]byte(fieldNames[f])); got != f {
			t.Errorf("fieldOf(%q) = %d, want %d", fieldNames[f], got, f)
		}
	}
	for _, name := range []string{"", "ID", "message", "toolcalls", "agentid", "contents"} {
		if got := fieldOf([]byte(name)); got != numFields {
			t.Errorf("fieldOf(%q) = %d, want none", name, got)
		}
	}
}

// TestStrCache checks that interned strings equal their bytes, whatever
// evicted what, and that repeats share one string.
func TestStrCache(t *testing.T) {
	var c strCache
	words := []string{"", "user", "assistant", "anthropic", "input", "output", "a", "b",
		"exactly-thirty-two-bytes-long-xx", "longer than thirty-two bytes, never interned"}
	for range 3 {
		for i := range 2000 {
			w := words[i%len(words)]
			if i%7 == 0 {
				w = string(rune('a'+i%26)) + w
			}
			b := []byte(w)
			if got := c.get(b); got != w {
				t.Fatalf("get(%q) = %q", w, got)
			}
		}
	}
	b := []byte("assistant")
	first := c.get(b)
	b[0] = 'X' // the interned string must not alias b
	if first != "assistant" {
		t.Fatalf("interned string changed with its bytes: %q", first)
	}
	if allocs := testing.AllocsPerRun(100, func() { c.get([]byte("assistant")) }); allocs != 0 {
		t.Errorf("a cached string allocates %v times", allocs)
	}
	// The values documents repeat most must not evict one another.
	common := [][]byte{}
	for _, s := range append([]string{"user", "assistant", "system", "tool", "input", "output", "reasoning",
		"cacheRead", "cacheWrite", "openai", "anthropic", "google", "mistral", "local", "azure-openai"}, KnownExtensions...) {
		common = append(common, []byte(s))
	}
	var fresh strCache
	if allocs := testing.AllocsPerRun(100, func() {
		for _, b := range common {
			fresh.get(b)
		}
	}); allocs != 0 {
		t.Errorf("the common values collide: %v allocations a round", allocs)
	}
}

// FuzzMemberIndex checks on arbitrary bytes that the member index of every
// object agrees with Tape.Lookup for every field, and that the standard
// extracting handlers, which read it, never panic.
func FuzzMemberIndex(f *testing.F) {
	for _, tc := range coreCases {
		if len(tc.line) < 4096 {
			f.Add([]byte(tc.line))
		}
	}
	f.Add([]byte(`{"id":"a","messages":[{"r\u006fle":"user","tokens":{"input":1,"in\u0070ut":2},"provider":null,"cost":"x"}],"agentId":"a"}`))
	hs, err := Standard(Options{Extract: true}).Resolve()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var tape jsonscan.Tape
		if tape.ParseKeepDuplicates(data, 0) != nil {
			return
		}
		var m members
		var scratch []byte
		for obj := range int32(len(tape.Tokens)) {
			indexObject(&tape, obj, &m, &scratch)
			for fl := field(0); fl < numFields; fl++ {
				if got, want := m.get(fl), tape.Lookup(obj, fieldNames[fl]); got != want {
					t.Fatalf("object %d, %s: index %d, Lookup %d", obj, fieldNames[fl], got, want)
				}
			}
		}
		var res Result
		NewProcessor(hs).Process(&stream.Record{Line: 1, Kind: stream.KindLine, Data: data, Raw: data}, &res)
		if res.Panic != nil {
			t.Fatalf("panic: %v", res.Panic)
		}
	})
}
