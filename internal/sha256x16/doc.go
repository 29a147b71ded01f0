// Package sha256x16 computes the SHA-256 digests of a batch of messages
// (the transcript hashes of a batch of documents) several times faster
// than crypto/sha256 one message after another, where the CPU has
// AVX-512: it hashes 16 messages at once, one in each 32-bit lane of
// the ZMM registers. The digests are those of crypto/sha256.Sum256; the
// tests compare them for every length to 300 bytes, lengths around the
// block edges, random batches up to 3 MB a message, and a fuzz target.
//
// # The kernel
//
// The 16-lane compression function is sha256X16Avx512 from
// github.com/minio/sha256-simd v1.0.1 (Apache-2.0; sha256blockAvx512_amd64.s,
// itself Intel's sha256_x16_avx512.asm of the Multi-Buffer Crypto for
// IPsec library, BSD-3-Clause), copied unchanged into kernel_amd64.s: see
// NOTICE and LICENSE-APACHE-2.0 here. Its contract (transposed states, a
// mask of lanes per block step) is written at its declaration in
// kernel_amd64.go. None of minio's Go code is used: its server goroutine,
// channels and timers do not suit a batch.
//
// # Scheduling
//
// Messages up to 1 KiB are copied with their padding, in their order, to
// a staging buffer, sorted by their number of blocks, and hashed in
// groups of 16 of (mostly) equal blocks: one kernel call a group. Longer
// messages, longest first, go through lanes that each take the next
// message when idle, the message read in place but for its padded last
// block; every call runs the steps that the busy lane nearest to the end
// of its run needs, so that no busy lane idles. When no message waits and
// 8 or fewer lanes are busy, crypto/sha256 finishes them (from the lane's
// state, through its UnmarshalBinary): a 16-lane step costs about as much
// as 8 blocks on SHA-NI here. So a message of megabytes among small ones
// is hashed in a lane while the others keep the kernel full, then on
// SHA-NI alone. A Hasher keeps its buffers, so that SumMany allocates
// nothing in the steady state.
//
// # Speeds
//
// Measured on the development machine (AMD EPYC, Zen 4: AVX-512 on
// 256-bit units, SHA-NI; 2 shared cores; go test -bench . -benchtime 2s
// -count 3, medians), in MB/s of message bytes, one core:
//
//	batch                                   sha256x16  crypto/sha256
//	tiny: 2000 × 170 ± 60 B                      1674            927
//	medium: 500 × 24 KB ± 50%                    3081           1720
//	mixed: 1000, tiny to 3 MB                    3118           1679
//	bench-1GiB.jsonl, 64 MB, 1000 a batch        3082           1655
//	short-3000000.jsonl, 64 MB, 1000 a batch     1345            874
//
// The kernel alone runs at about 3450 MB/s with its 16 lanes busy (298 ns
// a 16-block step); crypto/sha256 runs at 1750 MB/s on long messages, 36.5
// ns a block. Tiny messages lose to their padding (a 170-byte message
// takes 3 or 4 blocks) and to the copying and the per-message work; the
// lines read from a file are colder in the cache than the synthetic ones.
//
// # Fallback
//
// Where the CPU lacks AVX512F or AVX512BW (checked at run time with
// golang.org/x/sys/cpu), on other architectures, with the purego build
// tag or another compiler than gc, and for batches of 8 messages or fewer,
// SumMany calls crypto/sha256.Sum256 for each message.
package sha256x16
