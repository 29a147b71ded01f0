package objout

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestPutSendsDigest: every file a commit uploads goes with its
// manifest's SHA-256 as the checksum S3 checks the received bytes
// against (x-amz-checksum-sha256) and as the signed payload hash
// (x-amz-content-sha256), both the SHA-256 of the bytes sent: a byte
// changed on the way up is refused by the store (gofakes3 does not check
// them; S3 does), and the SDK does not read the body to hash it again.
func TestPutSendsDigest(t *testing.T) {
	f, _ := newS3(t)
	tg := openT(t)
	var mu sync.Mutex
	seen := map[string][3]string{} // key -> body sha256 hex, checksum header, content header
	f.setFail(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPut || strings.Contains(r.URL.Path, "/"+CommitsDir) {
			return false
		}
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		sum := sha256.Sum256(b)
		mu.Lock()
		seen[r.URL.Path] = [3]string{hex.EncodeToString(sum[:]), r.Header.Get("X-Amz-Checksum-Sha256"), r.Header.Get("X-Amz-Content-Sha256")}
		mu.Unlock()
		return false
	})
	s, err := tg.Prepare(context.Background(), Options{ScratchRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	writeNight(t, s.Out, 1, "n1")
	if _, err := s.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(seen) < 4 {
		t.Fatalf("%d data PUTs seen, want the night's files", len(seen))
	}
	for key, h := range seen {
		raw, _ := hex.DecodeString(h[0])
		if h[1] != base64.StdEncoding.EncodeToString(raw) || h[2] != h[0] {
			t.Errorf("%s: body SHA-256 %s, sent checksum %q and payload hash %q", key, h[0], h[1], h[2])
		}
	}
}
