package objout

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/convbatch/convbatch/internal/testkit/gcstest"
)

// newGCS gives t bucket b on the test process's Cloud Storage server
// (fake-gcs-server: gcstest), STORAGE_EMULATOR_HOST pointing at it.
func newGCS(t *testing.T) {
	gcstest.Start(t).Bucket(t, "b")
}

// TestGCS: on fake-gcs-server, ifGenerationMatch=0 refuses a second
// write of a key; two nights commit and check; two racing runs, one
// commit; gc removes the loser's objects after the grace period.
func TestGCS(t *testing.T) {
	newGCS(t)
	ctx := context.Background()
	tg, err := Open(ctx, "gs://b/out")
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Store.Put(ctx, "probe", bytes.NewReader([]byte("one")), 3, true); err != nil {
		t.Fatal(err)
	}
	if err := tg.Store.Put(ctx, "probe", bytes.NewReader([]byte("two")), 3, true); !errors.Is(err, ErrPrecondition) {
		t.Fatalf("second put-if-absent: %v, want ErrPrecondition", err)
	}
	tg.Store.Delete(ctx, "probe")
	scratch := t.TempDir()
	for run, tag := range []string{"n1", "n2"} {
		s, err := tg.Prepare(ctx, Options{ScratchRoot: scratch})
		if err != nil {
			t.Fatal(err)
		}
		writeNight(t, s.Out, run+1, tag)
		if c, err := s.Publish(ctx); err != nil || c == nil || c.Number != run+1 {
			t.Fatalf("night %d: %+v %v", run+1, c, err)
		}
		os.RemoveAll(scratch) // the next night downloads the state
	}
	if c, problems, err := tg.Check(ctx); err != nil || len(problems) > 0 || c.Run != 2 {
		t.Fatalf("check: %+v %v %v", c, problems, err)
	}
	var sessions []*Session
	for i := range 2 {
		s, err := tg.Prepare(ctx, Options{ScratchRoot: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		writeNight(t, s.Out, 3, []string{"a", "b"}[i])
		sessions = append(sessions, s)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range sessions {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = s.Publish(ctx) }()
	}
	wg.Wait()
	var ce *ConflictError
	if !(errs[0] == nil && errors.As(errs[1], &ce) || errs[1] == nil && errors.As(errs[0], &ce)) {
		t.Fatalf("race: %v, want one commit and one conflict", errs)
	}
	if c, problems, err := tg.Check(ctx); err != nil || len(problems) > 0 || c.Number != 3 {
		t.Fatalf("check after the race: %+v %v %v", c, problems, err)
	}
	if res, err := tg.GC(ctx, time.Hour, time.Now()); err != nil || res.Objects != 0 || res.Kept == 0 {
		t.Fatalf("gc within grace: %+v %v, want the loser's objects kept", res, err)
	}
	res, err := tg.GC(ctx, time.Hour, time.Now().Add(2*time.Hour))
	if err != nil || res.Objects == 0 {
		t.Fatalf("gc: %+v %v", res, err)
	}
	if _, problems, err := tg.Check(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("check after gc: %v %v", problems, err)
	}
}
