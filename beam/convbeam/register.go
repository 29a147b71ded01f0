package convbeam

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// Every DoFn and function is registered, as Beam requires for workers to
// find them by name (and go test, to run them at all).
func init() {
	register.DoFn3x1[context.Context, Shard, func(LineCount), error](&countFn{})
	register.Emitter1[LineCount]()
	register.DoFn7x1[context.Context, Shard, func(*LineCount) bool, func(int, []byte), func(int, RefTo), func(string, []byte), func(ShardResult), error](&readFn{})
	register.Iter1[LineCount]()
	register.Emitter2[int, []byte]()
	register.Emitter2[int, RefTo]()
	register.Emitter2[string, []byte]()
	register.Emitter1[ShardResult]()
	register.Function5x1(bucketFn)
	register.Iter1[RefTo]()
	register.Emitter2[string, IDEvidence]()
	register.Emitter1[IDStats]()
	register.Function2x1(addStats)
	register.DoFn3x2[string, func(*[]byte) bool, func(*IDEvidence) bool, Resolved, error](&resolveFn{})
	register.Iter1[[]byte]()
	register.Iter1[IDEvidence]()
	register.DoFn3x1[context.Context, Shard, func(Digest), error](&digestFn{})
	register.Emitter1[Digest]()
	register.DoFn6x1[context.Context, []byte, func(*ShardResult) bool, func(*Resolved) bool, func(*IDStats) bool, func(*Digest) bool, error](&publishFn{})
	register.Iter1[ShardResult]()
	register.Iter1[Resolved]()
	register.Iter1[IDStats]()
	register.Iter1[Digest]()
}
