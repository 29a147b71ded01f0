package cli

import (
	"github.com/convbatch/convbatch/bytesize"
)

// sizeSyntax says how a size is written, for the messages of size flags.
const sizeSyntax = "write a size such as 64MiB, 512KiB, 1.5GiB or 1000000 (bytes); KiB, MiB, GiB and TiB are powers of 1024, KB, MB, GB and TB powers of 1000"

// parseSize parses the value of a size flag, refusing with a usage error
// that names the flag and shows the syntax a value that is not a size, and
// one outside lo..hi with want, which says the range in words.
func parseSize(flag, value string, lo, hi int64, want string) (int64, error) {
	n, err := bytesize.Parse(value)
	if err != nil {
		return 0, usageErr("%s %q is not a size: %s", flag, value, sizeSyntax)
	}
	if n < lo || n > hi {
		return 0, usageErr("%s %q: want %s", flag, value, want)
	}
	return n, nil
}
