package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	fnpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/fnexecution_v1"
	"google.golang.org/grpc"

	"github.com/convbatch/convbatch/beam/internal/beamtest"
	"github.com/convbatch/convbatch/internal/exitcode"
	"github.com/convbatch/convbatch/internal/testkit/s3test"
)

// The job-server path (docs/SCALE-OUT.md, "On a job server"): convbeam
// submitted over gRPC to a stand-alone Prism job server, its binary staged
// as an artifact, the workers separate processes started by an EXTERNAL
// worker pool through the Go SDK's boot program, every file on S3 (the
// test process's S3 server on 127.0.0.1, which every process reaches
// through AWS_ENDPOINT_URL_S3).

// clusterBinaries are the programs of the set-up, built once per test
// process: convbeam (stripped, as make build-beam builds it), Prism's job
// server and the Go SDK's boot program (tools of the beam module's
// go.mod, which go tool keeps built in Go's build cache).
type clusterBinaries struct {
	convbeam, prism, boot string
}

var (
	buildOnce sync.Once
	built     clusterBinaries
	buildErr  error
)

// buildCluster builds the set-up's programs (once per process), or finds
// them in Go's build cache.
func buildCluster(t *testing.T) clusterBinaries {
	t.Helper()
	convbeam := commandBinary(t)
	buildOnce.Do(func() {
		built.convbeam = convbeam
		if built.prism, buildErr = cachedExecutable("tool", "-n", "prism"); buildErr != nil {
			return
		}
		built.boot, buildErr = cachedExecutable("tool", "-n", "container")
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// freePort returns a TCP port free on 127.0.0.1 a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startJobServer starts Prism's stand-alone job server on a free port and
// returns its endpoint once it accepts connections; it is killed when the
// test ends. Its log goes to log.
func startJobServer(t *testing.T, bin clusterBinaries, log *os.File) string {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(bin.prism, "--job_port", strconv.Itoa(port), "--serve_http=false", "--log_level", "warn")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	endpoint := "localhost:" + strconv.Itoa(port)
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.Close()
			return endpoint
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the job server did not listen on %s within 30 s: %v", endpoint, err)
		}
	}
}

// workerPool is a Beam EXTERNAL worker pool (BeamFnExternalWorkerPool),
// as a cluster's worker pool sidecar runs: for each worker the job server
// asks for, it starts the Go SDK's boot program as a separate process,
// which fetches the staged worker binary from the job server and runs it
// as its own child. It is Beam's container/pool on a port of the test's
// choosing, keeping the workers' processes so that a test can kill one.
type workerPool struct {
	fnpb.UnimplementedBeamFnExternalWorkerPoolServer
	boot, dir string
	log       *os.File
	addr      string
	srv       *grpc.Server

	mu    sync.Mutex
	boots map[string]*exec.Cmd
	// bins are the directories boot copied worker binaries into
	// (/tmp/binNNN, which boot never removes), removed at the end;
	// binsBefore are the /tmp/bin* names there before the pool started.
	bins       map[string]bool
	binsBefore map[string]bool
}

// bootBins is where boot copies the worker binary: a directory it makes
// with os.MkdirTemp("/tmp/", "bin*"), whatever TMPDIR says.
const bootBins = "/tmp/bin"

// binDirs returns the names of the /tmp/bin* entries.
func binDirs() map[string]bool {
	names, _ := filepath.Glob(bootBins + "*")
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	return set
}

// startWorkerPool serves a workerPool on 127.0.0.1 until the test ends.
func startWorkerPool(t *testing.T, bin clusterBinaries, log *os.File) *workerPool {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &workerPool{boot: bin.boot, dir: t.TempDir(), log: log, addr: ln.Addr().String(), srv: grpc.NewServer(),
		boots: map[string]*exec.Cmd{}, bins: map[string]bool{}, binsBefore: binDirs()}
	fnpb.RegisterBeamFnExternalWorkerPoolServer(p.srv, p)
	go p.srv.Serve(ln)
	t.Cleanup(p.stop)
	return p
}

// StartWorker starts boot for the worker, as Beam's container/pool does,
// with TMPDIR the pool's directory: the worker, boot's child, makes its
// temporary directories (convbeam-shard-*) there, removed with the pool's
// directory also when a test kills the worker in the middle of a shard.
func (p *workerPool) StartWorker(_ context.Context, req *fnpb.StartWorkerRequest) (*fnpb.StartWorkerResponse, error) {
	cmd := exec.Command(p.boot,
		"--id="+req.GetWorkerId(),
		"--control_endpoint="+req.GetControlEndpoint().GetUrl(),
		"--artifact_endpoint="+req.GetArtifactEndpoint().GetUrl(),
		"--provision_endpoint="+req.GetProvisionEndpoint().GetUrl(),
		"--logging_endpoint="+req.GetLoggingEndpoint().GetUrl(),
		"--semi_persist_dir="+p.dir)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.Dir = p.dir // boot writes pipeline_options.json where it runs
	cmd.Env = append(os.Environ(), "TMPDIR="+p.dir)
	if err := cmd.Start(); err != nil {
		return &fnpb.StartWorkerResponse{Error: err.Error()}, nil
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	go p.noteWorkerBinary(cmd.Process.Pid, done)
	p.mu.Lock()
	p.boots[req.GetWorkerId()] = cmd
	p.mu.Unlock()
	return &fnpb.StartWorkerResponse{}, nil
}

// noteWorkerBinary notes the directory of the binary of the worker that
// boot process pid starts (a copy boot makes under /tmp/binNNN and never
// removes), for stop to remove, watching until boot ends: the file boot
// has open while it copies, or the worker's executable once it runs.
func (p *workerPool) noteWorkerBinary(pid int, done chan struct{}) {
	for {
		paths, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
		for _, c := range children(pid) {
			paths = append(paths, fmt.Sprintf("/proc/%d/exe", c))
		}
		for _, link := range paths {
			if f, err := os.Readlink(link); err == nil && strings.HasPrefix(f, bootBins) && filepath.Base(f) == "worker" {
				p.mu.Lock()
				p.bins[filepath.Dir(f)] = true
				p.mu.Unlock()
				return
			}
		}
		select {
		case <-done:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// StopWorker ends the worker's boot process and its worker.
func (p *workerPool) StopWorker(_ context.Context, req *fnpb.StopWorkerRequest) (*fnpb.StopWorkerResponse, error) {
	p.mu.Lock()
	cmd := p.boots[req.GetWorkerId()]
	delete(p.boots, req.GetWorkerId())
	p.mu.Unlock()
	if cmd != nil {
		p.end(cmd.Process.Pid)
	}
	return &fnpb.StopWorkerResponse{}, nil
}

// workers returns the pids of the worker processes running (boot's
// children).
func (p *workerPool) workers() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var pids []int
	for _, cmd := range p.boots {
		pids = append(pids, children(cmd.Process.Pid)...)
	}
	return pids
}

// end kills boot process pid and its children.
func (p *workerPool) end(pid int) {
	for _, c := range children(pid) {
		syscall.Kill(c, syscall.SIGKILL)
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

// stop ends every worker and the server, and removes the worker binaries
// boot copied (into /tmp/binNNN/worker, which boot never removes), and
// the empty /tmp/bin* directories made since the pool started (of a boot
// ended before it copied; removing one another process's boot made is
// harmless, as boot makes the directory again when it copies).
func (p *workerPool) stop() {
	p.mu.Lock()
	for _, cmd := range p.boots {
		p.end(cmd.Process.Pid)
	}
	var bins []string
	for dir := range p.bins {
		bins = append(bins, dir)
	}
	p.mu.Unlock()
	p.srv.Stop()
	for _, dir := range bins {
		os.RemoveAll(dir)
	}
	for dir := range binDirs() {
		if fi, err := os.Lstat(dir); err == nil && fi.IsDir() && !p.binsBefore[dir] {
			os.Remove(dir) // only if empty
		}
	}
}

// children returns the pids of the processes whose parent is pid (the
// children of each of its threads: Go starts a process from any thread).
func children(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// submit runs the convbeam binary against the job server, as a user
// submits a job, and returns its exit code and standard error. The
// runner's log goes to the test's directory (--log): a failed job would
// keep its default log in the system's temporary directory.
func submit(t *testing.T, bin clusterBinaries, args ...string) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	args = append(args[:len(args):len(args)], "--log", filepath.Join(t.TempDir(), "convbeam.log"))
	cmd := exec.Command(bin.convbeam, args...)
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String()
	}
	t.Fatal(err)
	return 0, ""
}

// TestJobServer runs convbeam the way a cluster runs it: submitted over
// gRPC to a stand-alone Prism job server, with inputs, keyring and OUT on
// S3, the workers as separate processes of an EXTERNAL worker pool (the
// worker binary staged through the job server), and in LOOPBACK (workers
// in the submitting process); each OUT, read back from the bucket, equals
// convbatch run's on the same inputs: tables, totals, verdicts, archives,
// rejects. Then a worker is killed (SIGKILL) in the middle of a job: the
// job fails, nothing is published, and a rerun into the same OUT equals
// the uninterrupted run and leaves no temporary files.
func TestJobServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds convbeam, Prism and boot and runs four jobs (about a minute)")
	}
	bin := buildCluster(t)
	const bucket = "jobserver"
	dir := t.TempDir()
	s3 := s3test.Start(t)
	s3.Bucket(t, bucket)
	_, keys, urls := beamtest.NightsIn(t, s3, "s3", bucket, filepath.Join(dir, "in"))
	want := filepath.Join(dir, "convbatch")
	beamtest.ConvbatchRun(t, want, append([]string{"--keys", keys, "--max-doc-bytes", "1MiB"}, urls...)...)

	log, err := os.Create(filepath.Join(dir, "cluster.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	defer func() {
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("job server and workers' log (last 4 KiB):\n%s", b[max(0, len(b)-4096):])
		}
	}()
	endpoint := startJobServer(t, bin, log)
	// job returns convbeam's arguments for a job into OUT out; an EXTERNAL
	// job's workers are started by the worker pool at pool.
	job := func(out, env string, pool *workerPool) []string {
		args := []string{"--runner", "universal", "--endpoint", endpoint, "--environment_type", env, "--worker_binary", bin.convbeam,
			"--input", "s3://" + bucket + "/night-*/*.json*", "--output", "s3://" + bucket + "/" + out,
			"--keys", "s3://" + bucket + "/keys.json", "--shard_bytes", "65536", "--max_doc_bytes", "1048576"}
		if env == "EXTERNAL" {
			args = append(args, "--environment_config", pool.addr)
		}
		return args
	}
	// published checks that OUT on S3, as its newest commit names it
	// (package objout, as convbatch run -o s3://… commits), equals
	// convbatch run's, and holds no temporary files.
	published := func(t *testing.T, out string) {
		t.Helper()
		for _, k := range s3.Keys(t, bucket, out+"/") {
			if strings.HasPrefix(k, out+"/.convbeam/") {
				t.Errorf("temporary file left: %s", k)
			}
		}
		got := filepath.Join(t.TempDir(), "out")
		if c := beamtest.DownloadCommit(t, "s3://"+bucket+"/"+out, got); c.Number != 1 {
			t.Errorf("commit %d, want 1", c.Number)
		}
		beamtest.CompareOutputs(t, want, got)
	}

	// The three cases are jobs on the one job server at once (a job server
	// runs jobs side by side), each EXTERNAL one with its own worker pool,
	// so that killing the workers of one job leaves the other's alone
	// (issue 45 item 14: they ran one after another).
	t.Run("jobs", func(t *testing.T) {
		for _, env := range []string{"EXTERNAL", "LOOPBACK"} {
			t.Run(env, func(t *testing.T) {
				t.Parallel()
				out := "out-" + strings.ToLower(env)
				var pool *workerPool
				if env == "EXTERNAL" {
					pool = startWorkerPool(t, bin, log)
				}
				code, stderr := submit(t, bin, job(out, env, pool)...)
				if code != exitcode.Findings {
					t.Fatalf("exit %d, want %d (findings: the inputs hold rejects): %s", code, exitcode.Findings, stderr)
				}
				if !strings.Contains(stderr, "outputs in s3://"+bucket+"/"+out) || strings.Contains(stderr, s3test.Secret) {
					t.Errorf("stderr %q: want the summary naming OUT, and never the secret key", stderr)
				}
				published(t, out)
			})
		}
		workerKilled(t, bin, s3, bucket, job, published, log)
	})
}

// workerKilled is TestJobServer's case of a worker killed (SIGKILL) in the
// middle of a job: the job fails, nothing is published, and a rerun into
// the same OUT equals the uninterrupted run and leaves no temporary files.
func workerKilled(t *testing.T, bin clusterBinaries, s3 *s3test.Server, bucket string, job func(out, env string, pool *workerPool) []string, published func(*testing.T, string), log *os.File) {
	t.Run("worker killed", func(t *testing.T) {
		t.Parallel()
		pool := startWorkerPool(t, bin, log)
		const out = "out-killed"
		killed := make(chan int, 1)
		stop := make(chan struct{})
		go func() {
			// Once a worker runs and a shard's files are on S3, the job is
			// in its middle: kill the worker.
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				pids := pool.workers()
				if len(pids) == 0 || len(s3.Keys(t, bucket, out+"/.convbeam/tmp/")) == 0 {
					continue
				}
				for _, pid := range pids {
					syscall.Kill(pid, syscall.SIGKILL)
				}
				killed <- len(pids)
				return
			}
		}()
		code, stderr := submit(t, bin, job(out, "EXTERNAL", pool)...)
		close(stop)
		select {
		case n := <-killed:
			t.Logf("killed %d worker process(es) in the middle of the job", n)
		default:
			t.Fatalf("the job ended (exit %d) before a worker could be killed in its middle", code)
		}
		if code != exitcode.Fatal || !strings.Contains(stderr, "nothing was published") {
			t.Fatalf("job with its worker killed: exit %d, want %d and nothing published: %s", code, exitcode.Fatal, stderr)
		}
		for _, k := range s3.Keys(t, bucket, out+"/") {
			if !strings.HasPrefix(k, out+"/.convbeam/tmp/") {
				t.Errorf("published by the failed job: %s", k)
			}
		}
		code, stderr = submit(t, bin, job(out, "EXTERNAL", pool)...)
		if code != exitcode.Findings {
			t.Fatalf("rerun: exit %d, want %d: %s", code, exitcode.Findings, stderr)
		}
		published(t, out)
	})
}
