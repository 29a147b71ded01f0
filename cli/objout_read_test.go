package cli

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convbatch/convbatch/internal/testkit/chdbtest"
	"github.com/convbatch/convbatch/objout"
	"github.com/convbatch/convbatch/tabledef"
)

// chBucket is the S3 test server's bucket in the ClickHouse tests
// (ClickHouse takes no bucket name shorter than 3 characters).
const chBucket = objoutBucket

// chOwnColumns are the columns of a table that are each OUT's own (when
// it first committed a receipt), left out when two OUTs' rows are
// compared in ClickHouse.
var chOwnColumns = map[string]string{tabledef.Receipts: " EXCEPT (" + tabledef.ColFirstCommittedAt + ")"}

// chBraces is the glob that names exactly the files names under dir: dir
// and one brace alternation of the names' rest (ClickHouse's {a,b}).
func chBraces(dir string, names []string) string {
	rest := make([]string, len(names))
	for i, n := range names {
		rest[i] = strings.TrimPrefix(n, dir)
	}
	sort.Strings(rest)
	if len(rest) == 1 {
		return dir + rest[0]
	}
	return dir + "{" + strings.Join(rest, ",") + "}"
}

// chS3Table is the ClickHouse s3() call that reads table as commit c of
// the OUT under key prefix prefix names it: exactly the keys of its
// parts the record names, path-style on the S3 test server at endpoint,
// bucket chBucket, with the test's fake keys. It returns "" when c names no
// part of table.
func chS3Table(endpoint, prefix string, c *objout.Commit, table string) string {
	dir := prefix + "tables/" + table + "/"
	var keys []string
	for _, f := range c.Files {
		if strings.HasPrefix(f.Path, "tables/"+table+"/") && strings.HasSuffix(f.Path, ".parquet") {
			keys = append(keys, prefix+f.Key)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	return fmt.Sprintf("s3(%s, %s, %s, 'Parquet')", chdbtest.Literal(endpoint+"/"+chBucket+"/"+chBraces(dir, keys)),
		chdbtest.Literal("AKIATESTTESTTEST"), chdbtest.Literal(objoutSecret))
}

// chFileTable is the ClickHouse file() call that reads table in the local
// OUT at base/out (out relative to base, where chDB runs): its parts.
func chFileTable(t *testing.T, base, out, table string) string {
	t.Helper()
	var parts []string
	err := filepath.WalkDir(filepath.Join(base, out, "tables", table), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			rel, err := filepath.Rel(base, p)
			if err != nil {
				return err
			}
			parts = append(parts, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil || len(parts) == 0 {
		t.Fatalf("table %s of %s: %d parts: %v", table, out, len(parts), err)
	}
	return fmt.Sprintf("file(%s, 'Parquet')", chdbtest.Literal(chBraces(path.Join(out, "tables", table)+"/", parts)))
}

// chSameRows fails t unless the rows a and b read (ClickHouse table
// functions) are the same multiset, EXCEPT ALL both ways, and not none.
func chSameRows(t *testing.T, dir, table, a, b string) {
	t.Helper()
	ex := chOwnColumns[table]
	q := fmt.Sprintf(`SELECT (SELECT count() FROM %[1]s) AS a, (SELECT count() FROM %[2]s) AS b,
		(SELECT count() FROM (SELECT *%[3]s FROM %[1]s EXCEPT ALL SELECT *%[3]s FROM %[2]s)) AS only_a,
		(SELECT count() FROM (SELECT *%[3]s FROM %[2]s EXCEPT ALL SELECT *%[3]s FROM %[1]s)) AS only_b`, a, b, ex)
	row := chdbtest.Query(t, dir, q)[0][0]
	na, nb := chdbtest.Int(t, row["a"]), chdbtest.Int(t, row["b"])
	oa, ob := chdbtest.Int(t, row["only_a"]), chdbtest.Int(t, row["only_b"])
	t.Logf("table %s: %d rows in s3(), %d in the local OUT; EXCEPT ALL: %d and %d", table, na, nb, oa, ob)
	if na == 0 || na != nb || oa != 0 || ob != 0 {
		t.Errorf("table %s: s3() reads %d rows, the local OUT %d; %d only in s3(), %d only local: want the same rows", table, na, nb, oa, ob)
	}
}

// readerNights runs night 1 into a local OUT, night 1 then night 2
// (--incremental) into a second local OUT and night 1 into url; it
// returns the directory, the two local OUTs (relative to it) and the
// arguments of night 2's run into url.
func readerNights(t *testing.T, url string) (dir, local1, local2 string, night2 []string) {
	t.Helper()
	dir = t.TempDir()
	keys, n1, n2 := genTwoNights(t, dir, 2)
	scratch := filepath.Join(dir, "scratch")
	local1, local2 = "local1", "local2"
	for _, run := range [][]string{
		{"-o", filepath.Join(dir, local1), n1},
		{"-o", filepath.Join(dir, local2), n1},
		{"-o", filepath.Join(dir, local2), "--incremental", n1, n2},
		{"--scratch-dir", scratch, "-o", url, n1},
	} {
		if r := convbatch(t, nil, append([]string{"run", "--progress", "never", "--keys", keys}, run...)...); r.code != 0 {
			t.Fatalf("%v: exit %d: %s", run, r.code, r.stderr)
		}
	}
	return dir, local1, local2, []string{"run", "--progress", "never", "--keys", keys, "--scratch-dir", scratch, "-o", url, "--incremental", n1, n2}
}

// TestObjectOutClickHouseS3 (issue 44 item 3): ClickHouse (chDB) reads
// each table of an s3:// OUT of two nights with s3() over exactly the
// keys the newest commit record names, on the S3 test server, and gets
// the rows of a local OUT of the same nights: EXCEPT ALL both ways is
// empty, the counts are equal and not 0. The same s3() read against the
// local OUT of night 1 alone differs (the comparison can fail).
func TestObjectOutClickHouseS3(t *testing.T) {
	chdbtest.Require(t)
	objoutS3Hooked(t, chBucket, nil)
	url := "s3://" + chBucket + "/nightly/out"
	dir, local1, local2, night2 := readerNights(t, url)
	if r := convbatch(t, nil, night2...); r.code != 0 {
		t.Fatalf("night 2: exit %d: %s", r.code, r.stderr)
	}
	ctx := context.Background()
	tg, err := objout.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.Latest(ctx)
	if err != nil || c == nil || c.Run != 2 {
		t.Fatalf("newest commit: %+v, %v; want run 2", c, err)
	}
	endpoint := os.Getenv("AWS_ENDPOINT_URL_S3")
	for _, table := range tabledef.Names {
		src := chS3Table(endpoint, tg.Prefix, c, table)
		if src == "" {
			t.Errorf("table %s: the commit names no part of it", table)
			continue
		}
		chSameRows(t, dir, table, src, chFileTable(t, dir, local2, table))
	}
	// Night 2 added usage rows: s3() against night 1's local OUT differs.
	ex := chOwnColumns[tabledef.Usage]
	q := fmt.Sprintf("SELECT count() AS n FROM (SELECT *%[3]s FROM %[1]s EXCEPT ALL SELECT *%[3]s FROM %[2]s)",
		chS3Table(endpoint, tg.Prefix, c, tabledef.Usage), chFileTable(t, dir, local1, tabledef.Usage), ex)
	if n := chdbtest.Int(t, chdbtest.Query(t, dir, q)[0][0]["n"]); n == 0 {
		t.Error("s3() of night 2 EXCEPT ALL night 1's local usage table: 0 rows; the comparison cannot fail")
	}
}

// readerAnswer is what one pass of the looping reader saw: the commit it
// followed and, per table, the rows' count and checksum.
type readerAnswer struct {
	commit int
	sums   map[string]string
}

// readerLog is the looping reader's answers, which the S3 server's hook
// waits on.
type readerLog struct {
	mu      sync.Mutex
	list    []readerAnswer
	err     error
	changed chan struct{}
	done    chan struct{} // closed when the reader stops
}

func (l *readerLog) add(a readerAnswer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, a)
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *readerLog) snapshot() []readerAnswer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]readerAnswer(nil), l.list...)
}

// waitFor waits until ok holds for the answers, the reader stopped, or
// two minutes passed; it reports whether ok holds.
func (l *readerLog) waitFor(ok func([]readerAnswer) bool) bool {
	timeout := time.After(2 * time.Minute)
	for {
		l.mu.Lock()
		hold, ch := ok(l.list), l.changed
		l.mu.Unlock()
		if hold {
			return true
		}
		select {
		case <-ch:
		case <-l.done:
			return ok(l.snapshot())
		case <-timeout:
			return false
		}
	}
}

// chSums returns, per table, the count and checksum of the rows each
// source reads (but the OUT's own columns): "count:sum of cityHash64".
func chSums(t *testing.T, dir string, sources map[string]string) (map[string]string, error) {
	var tables, sqls []string
	for _, table := range tabledef.Names {
		if sources[table] == "" {
			return nil, fmt.Errorf("table %s: no parts", table)
		}
		tables = append(tables, table)
		sqls = append(sqls, fmt.Sprintf("SELECT count() AS n, toString(sum(cityHash64(*))) AS h FROM (SELECT *%s FROM %s)", chOwnColumns[table], sources[table]))
	}
	res, err := chdbtest.QueryErr(t, dir, sqls...)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, table := range tables {
		out[table] = fmt.Sprintf("%v:%v", res[i][0]["n"], res[i][0]["h"])
	}
	return out, nil
}

// TestObjectOutReaderDuringCommit (issue 44 item 3): a reader that
// follows the newest commit record and queries each table through chDB's
// s3() over the keys it names, in a loop, while night 2 uploads and
// commits to the same prefix, sees night 1's rows or night 2's (the
// count and checksum of each table's rows equal those of a local OUT of
// night 1 or of nights 1 and 2), never a mix, and sees both. The S3
// server holds night 2's first upload until the reader answered once
// more, and its commit record until it answered twice more, so answers
// fall inside the upload and just before the commit whatever the
// machine's speed; every answer given before the record was let through
// is night 1's, while a glob of the prefix then reads night 2's usage
// parts already (what following the record guards against).
func TestObjectOutReaderDuringCommit(t *testing.T) {
	chdbtest.Require(t)
	log := &readerLog{changed: make(chan struct{}), done: make(chan struct{})}
	var armed, heldUpload, heldCommit atomic.Bool
	var (
		globbed  string        // what a glob of the prefix read while the commit was held
		globRead func() string // reads usage's folder with a glob
	)
	var released atomic.Int64
	released.Store(-1)
	count := func(n int) func([]readerAnswer) bool {
		return func(a []readerAnswer) bool { return len(a) >= n }
	}
	objoutS3Hooked(t, chBucket, func(r *http.Request) {
		if !armed.Load() || r.Method != http.MethodPut {
			return
		}
		if strings.Contains(r.URL.Path, "/"+objout.CommitsDir) {
			if !heldCommit.Swap(true) {
				log.waitFor(count(len(log.snapshot()) + 2))
				// A reader that globs the prefix instead of following
				// the record reads night 2's parts already.
				globbed = globRead()
				released.Store(int64(len(log.snapshot())))
			}
			return
		}
		if !heldUpload.Swap(true) {
			log.waitFor(count(len(log.snapshot()) + 1))
		}
	})
	url := "s3://" + chBucket + "/nightly/out"
	dir, local1, local2, night2 := readerNights(t, url)
	endpoint := os.Getenv("AWS_ENDPOINT_URL_S3")
	globRead = func() string {
		src := map[string]string{}
		for _, table := range tabledef.Names {
			src[table] = fmt.Sprintf("s3(%s, %s, %s, 'Parquet')", chdbtest.Literal(endpoint+"/"+chBucket+"/nightly/out/tables/"+table+"/*.parquet"),
				chdbtest.Literal("AKIATESTTESTTEST"), chdbtest.Literal(objoutSecret))
		}
		glob, err := chSums(t, dir, src)
		return fmt.Sprint(glob[tabledef.Usage], " ", err)
	}
	want := map[int]map[string]string{}
	for night, out := range map[int]string{1: local1, 2: local2} {
		src := map[string]string{}
		for _, table := range tabledef.Names {
			src[table] = chFileTable(t, dir, out, table)
		}
		sums, err := chSums(t, dir, src)
		if err != nil {
			t.Fatalf("the local OUT of night %d: %v", night, err)
		}
		want[night] = sums
	}
	if fmt.Sprint(want[1]) == fmt.Sprint(want[2]) {
		t.Fatalf("nights 1 and 2 have the same rows: %v", want[1])
	}

	ctx := context.Background()
	tg, err := objout.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	go func() {
		defer close(log.done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			c, err := tg.Latest(ctx)
			if err == nil && c == nil {
				err = fmt.Errorf("no commit")
			}
			var sums map[string]string
			if err == nil {
				src := map[string]string{}
				for _, table := range tabledef.Names {
					src[table] = chS3Table(endpoint, tg.Prefix, c, table)
				}
				sums, err = chSums(t, dir, src)
			}
			if err != nil {
				log.mu.Lock()
				log.err = err
				log.mu.Unlock()
				return
			}
			log.add(readerAnswer{commit: c.Number, sums: sums})
		}
	}()
	if !log.waitFor(count(1)) {
		close(stop)
		<-log.done
		t.Fatalf("the reader gave no answer: %v", log.err)
	}
	armed.Store(true)
	if r := convbatch(t, nil, night2...); r.code != 0 {
		t.Errorf("night 2: exit %d: %s", r.code, r.stderr)
	}
	saw2 := log.waitFor(func(a []readerAnswer) bool { return len(a) > 0 && a[len(a)-1].commit == 2 })
	close(stop)
	<-log.done
	if log.err != nil {
		t.Errorf("the reader: %v", log.err)
	}
	if !heldUpload.Load() || !heldCommit.Load() {
		t.Errorf("the server held night 2's upload %v, its commit %v: want both", heldUpload.Load(), heldCommit.Load())
	}
	if w1, w2 := want[1][tabledef.Usage]+" <nil>", want[2][tabledef.Usage]+" <nil>"; globbed != w2 || globbed == w1 {
		t.Errorf("a glob of tables/usage/ while night 2's commit was held read %s: want night 2's uncommitted parts too, %s (night 1: %s)", globbed, w2, w1)
	}
	answers := log.snapshot()
	seen := map[int]int{}
	for i, a := range answers {
		seen[a.commit]++
		night := a.commit // commit N holds night N here
		if w, ok := want[night]; !ok || fmt.Sprint(a.sums) != fmt.Sprint(w) {
			t.Errorf("answer %d followed commit %d and read %v: want night %d's rows %v", i, a.commit, a.sums, night, w)
		}
		if int64(i) < released.Load() && a.commit != 1 {
			t.Errorf("answer %d, given before night 2's commit record was written, followed commit %d", i, a.commit)
		}
	}
	t.Logf("%d answers: %d of night 1 (%d before night 2's commit record was let through), %d of night 2", len(answers), seen[1], released.Load(), seen[2])
	if seen[1] < 3 || seen[2] == 0 || !saw2 {
		t.Errorf("the reader saw night 1 %d times, night 2 %d times: want at least 3 and 1", seen[1], seen[2])
	}
}
