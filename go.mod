module github.com/convbatch/convbatch

go 1.26.0

require (
	github.com/cloudflare/circl v1.6.5 // indirect
	github.com/gowebpki/jcs v1.0.2 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/term v0.48.0 // indirect
)
