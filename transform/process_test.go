package transform

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/convbatch/convbatch/codes"
	"github.com/convbatch/convbatch/stream"
)

// fill sets every exported field of the struct v points to, recursively,
// to a non-zero value.
func fill(t *testing.T, v reflect.Value, path string) {
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		p := path + "." + sf.Name
		switch f.Kind() {
		case reflect.Struct:
			fill(t, f, p)
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 2, 2))
		case reflect.Array:
			f.Index(0).Set(reflect.ValueOf(uint8(1)).Convert(f.Type().Elem()))
		case reflect.Interface:
			f.Set(reflect.ValueOf(errors.New("x")))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(3)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(3)
		case reflect.Float64, reflect.Float32:
			f.SetFloat(3)
		default:
			t.Fatalf("%s: fill does not know kind %s", p, f.Kind())
		}
		if f.IsZero() {
			t.Fatalf("%s: still zero", p)
		}
	}
}

// checkReset reports every exported field that is neither zero nor an
// empty slice.
func checkReset(t *testing.T, v reflect.Value, path string) {
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		p := path + "." + sf.Name
		switch {
		case f.Kind() == reflect.Struct:
			checkReset(t, f, p)
		case f.Kind() == reflect.Slice:
			if f.Len() != 0 {
				t.Errorf("%s: %d elements left after reset", p, f.Len())
			}
		case !f.IsZero():
			t.Errorf("%s: %v left after reset", p, f.Interface())
		}
	}
}

// TestResetClearsEveryField checks that Result.reset, which clears field
// by field, leaves no exported field of a used Result set.
func TestResetClearsEveryField(t *testing.T) {
	var r Result
	fill(t, reflect.ValueOf(&r).Elem(), "Result")
	r.reset()
	checkReset(t, reflect.ValueOf(&r).Elem(), "Result")
	if cap(r.Warnings) == 0 || cap(r.Unknown) == 0 || cap(r.Rows.Usage) == 0 || cap(r.Rows.ToolCalls) == 0 {
		t.Error("reset dropped the memory of the lists")
	}
}

// TestProcessDropsHugeIndex checks that the message index of a document of
// very many messages is not kept for the next document, and that a normal
// one is.
func TestProcessDropsHugeIndex(t *testing.T) {
	for _, tc := range []struct {
		messages int
		kept     bool
	}{{3, true}, {maxKeptMessages + 1, false}} {
		doc := []byte(`{"id":"a","messages":[` + strings.Repeat(`{"role":"user"},`, tc.messages-1) + `{"role":"user"}]}`)
		hs, err := Default().Resolve()
		if err != nil {
			t.Fatal(err)
		}
		p := NewProcessor(hs)
		var res Result
		p.Process(&stream.Record{Kind: stream.KindLine, Data: doc, Raw: doc, Line: 1}, &res)
		if res.Reject != codes.NoReject || len(p.doc.msgs) != tc.messages {
			t.Fatalf("%d messages: reject %q, %d indexed", tc.messages, res.Reject, len(p.doc.msgs))
		}
		small := []byte(`{"id":"b","messages":[]}`)
		p.Process(&stream.Record{Kind: stream.KindLine, Data: small, Raw: small, Line: 2}, &res)
		if kept := cap(p.doc.msgs) > 0; kept != tc.kept {
			t.Errorf("%d messages: index memory kept %v, want %v", tc.messages, kept, tc.kept)
		}
	}
}
