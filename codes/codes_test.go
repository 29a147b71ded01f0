package codes

import (
	"slices"
	"testing"
)

func stringsOf[T interface{ String() string }](list []T) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = v.String()
	}
	return out
}

// TestStrings pins the wire strings: they are the data contract.
func TestStrings(t *testing.T) {
	for _, tc := range []struct {
		got, want []string
	}{
		{stringsOf(Rejects()), []string{"input-checksum", "bom", "too-large", "input-truncated", "invalid-utf8", "not-json", "too-deep", "not-object", "duplicate-key", "bad-id", "bad-messages", "bad-message", "bad-role", "bad-extensions", "bad-title", "bad-created-at", "bad-message-field"}},
		{stringsOf(Warnings()), []string{"bom-dropped", "crlf", "duplicate-id", "unknown-extension", "undeclared-extension", "tool-result-orphan", "tool-call-duplicate-id", "statement-agent-unknown", "transcript-unhashable", "usage-wrong-type", "usage-invalid-count"}},
		{stringsOf(InputFaults()), []string{"open-error", "read-error", "truncated", "zstd-window-too-large", "zstd-checksum", "zstd-corrupt", "gzip-checksum", "gzip-corrupt", "checksum-mismatch"}},
		{stringsOf(Skips()), []string{"dot-file", "dot-directory", "sidecar", "unknown-type", "directory", "not-regular"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("codes %q, want %q", tc.got, tc.want)
		}
	}
	if NoReject.String() != "" || Reject(200).String() != "unknown-reject" || Warning(200).String() != "unknown-warning" || InputFault(200).String() != "unknown-input-fault" || Skip(200).String() != "unknown-skip" {
		t.Error("NoReject or an out-of-range value has the wrong string")
	}
}
