// Package jsonw appends JSON values byte for byte as encoding/json writes
// them, for the writers that build their lines by hand (a receipts state
// line, an audit's --json report): the same bytes at a fraction of the
// cost of reflection.
package jsonw

import "encoding/json"

// AppendString appends s as a JSON string as encoding/json writes it
// (HTML-safe): directly when every byte is printable ASCII that needs no
// escape, through json.Marshal otherwise.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
