package jsonscan_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/convbatch/convbatch/jsonscan"
)

// Parse leaves a flat tape of tokens that point into the document's bytes;
// nothing is decoded into maps. Token 0 is the root; Lookup finds a
// member's value, Str unescapes a string only when asked.
func ExampleTape() {
	doc := []byte(`{"id":"c1","messages":[{"role":"user","content":"caf\u00e9"}]}`)
	var tape jsonscan.Tape // reuse one Tape across documents
	if err := tape.Parse(doc, jsonscan.DefaultMaxDepth); err != nil {
		log.Fatal(err)
	}
	id := tape.Lookup(0, "id")
	msgs := tape.Lookup(0, "messages")
	fmt.Println(tape.Kind(0), tape.Str(id), tape.Kind(msgs), tape.Len(msgs))
	first := msgs + 1 // an array's first element follows it on the tape
	content := tape.Lookup(first, "content")
	fmt.Printf("raw %s, unescaped %q\n", tape.Raw(content), tape.Str(content))
	// Output:
	// object c1 array 1
	// raw "caf\u00e9", unescaped "café"
}

// A document that does not parse gives an *Error with the byte offset of
// the fault and what was found there, never quoting the document.
func ExampleError() {
	var tape jsonscan.Tape
	err := tape.Parse([]byte(`{"a":1,"a":2}`), jsonscan.DefaultMaxDepth)
	var perr *jsonscan.Error
	if errors.As(err, &perr) {
		fmt.Println(perr.Offset, err)
	}
	// Output:
	// 7 json: duplicate member name at byte 7
}
