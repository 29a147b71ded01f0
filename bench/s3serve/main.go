// Command s3serve serves files over the S3 protocol from memory, for
// bench/s3.sh: gofakes3 (the S3 server the tests use) on 127.0.0.1, one
// bucket holding each file given under its base name. It prints the
// endpoint URL on stdout once the files are loaded, then serves until
// killed.
//
//	go run ./bench/s3serve -bucket bench FILE...
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

func main() {
	bucket := flag.String("bucket", "bench", "the bucket the files go into")
	flag.Parse()
	be := s3mem.New()
	if err := be.CreateBucket(*bucket); err != nil {
		log.Fatal(err)
	}
	for _, name := range flag.Args() {
		b, err := os.ReadFile(name)
		if err != nil {
			log.Fatal(err)
		}
		if _, err := be.PutObject(*bucket, filepath.Base(name), map[string]string{}, bytes.NewReader(b), int64(len(b)), nil); err != nil {
			log.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, gofakes3.New(be).Server()))
}
