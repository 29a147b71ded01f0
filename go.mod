module github.com/convbatch/convbatch

go 1.26.0

require (
	github.com/cloudflare/circl v1.6.5
	github.com/gowebpki/jcs v1.0.2
	github.com/klauspost/compress v1.20.4
	github.com/spf13/pflag v1.1.0
	golang.org/x/term v0.48.0
)

require (
	github.com/apache/arrow/go/v17 v17.0.0 // indirect
	golang.org/x/crypto v0.54.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
