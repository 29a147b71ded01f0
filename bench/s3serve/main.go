// Command s3serve serves files over the S3 protocol from memory, for
// bench/s3.sh: gofakes3 (the S3 server the tests use) on 127.0.0.1, one
// bucket holding each file given under its base name. It prints the
// endpoint URL on stdout once the files are loaded, then serves until
// killed.
//
// gofakes3 keeps no checksums but the MD5 ETag. With -crc64nvme the server
// also answers a HEAD or an unranged GET that asks for checksums
// (x-amz-checksum-mode: ENABLED) with the object's full-object CRC-64/NVME,
// as S3 does for an object uploaded with its default checksum (AWS SDKs and
// CLI since 2025), so the bench can measure the reader's check with either
// checksum.
//
//	go run ./bench/s3serve -bucket bench [-crc64nvme] FILE...
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/crc64nvme"
)

func main() {
	bucket := flag.String("bucket", "bench", "the bucket the files go into")
	withCRC := flag.Bool("crc64nvme", false, "tell each object's full-object CRC-64/NVME, as S3 does")
	flag.Parse()
	crcs := map[string]string{} // "/bucket/key" → base64 of the big-endian CRC
	be := s3mem.New()
	if err := be.CreateBucket(*bucket); err != nil {
		log.Fatal(err)
	}
	for _, name := range flag.Args() {
		b, err := os.ReadFile(name)
		if err != nil {
			log.Fatal(err)
		}
		crcs["/"+*bucket+"/"+filepath.Base(name)] = base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, crc64nvme.Checksum(b)))
		if _, err := be.PutObject(*bucket, filepath.Base(name), map[string]string{}, bytes.NewReader(b), int64(len(b)), nil); err != nil {
			log.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	h := gofakes3.New(be).Server()
	if *withCRC {
		h = withChecksums(h, crcs)
	}
	log.Fatal(http.Serve(ln, h))
}

// withChecksums adds the full-object CRC-64/NVME headers to the answers
// of HEADs and unranged GETs of an object that ask for checksums.
func withChecksums(next http.Handler, crcs map[string]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		crc, ok := crcs[r.URL.Path]
		if ok && (r.Method == http.MethodHead || r.Method == http.MethodGet && r.Header.Get("Range") == "") &&
			strings.EqualFold(r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED") {
			w.Header().Set("X-Amz-Checksum-Crc64nvme", crc)
			w.Header().Set("X-Amz-Checksum-Type", "FULL_OBJECT")
		}
		next.ServeHTTP(w, r)
	})
}
