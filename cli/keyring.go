package cli

import (
	"errors"
	"fmt"

	"github.com/convbatch/convbatch/verify"
)

// keyringErr is the error of a --keys file that could not be loaded: an
// interrupt while it was read is the run's interrupt (exit 3); one over
// the cap says which flag raises it; any other is a usage error.
func keyringErr(e *env, err error) error {
	switch {
	case e.ctx.Err() != nil:
		return fatalErr(fmt.Errorf("interrupted while reading the keyring: %w", err))
	case errors.Is(err, verify.ErrKeyringTooLarge):
		return usageErr("--keys: %v; raise --max-keyring-bytes to read it", err)
	}
	return usageErr("--keys: %v", err)
}
