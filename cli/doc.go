// Package cli is convbatch's command line: it parses arguments with pflag,
// fills the library's option structs and calls the library. Main takes its
// arguments and streams, so tests run the whole command in-process; only the
// program's main exits.
//
// Exit codes: 0 clean, 1 completed with findings (rejects, damaged inputs),
// 2 usage error, 3 fatal error (nothing published).
package cli
