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
	register.DoFn7x1[context.Context, Shard, func(*LineCount) bool, func(string, Evidence), func(string, string), func(string, []byte), func(ShardResult), error](&readFn{})
	register.Iter1[LineCount]()
	register.Emitter2[string, Evidence]()
	register.Emitter2[string, string]()
	register.Emitter2[string, []byte]()
	register.Emitter1[ShardResult]()
	register.Function2x1(mergeEvidence)
	register.Function2x1(idStatsFn)
	register.Function2x1(addStats)
	register.Function4x0(routeFn)
	register.Iter1[Evidence]()
	register.Iter1[string]()
	register.Emitter2[string, IDEvidence]()
	register.Function3x2(resolveFn)
	register.Iter1[[]byte]()
	register.Iter1[IDEvidence]()
	register.DoFn5x1[context.Context, []byte, func(*ShardResult) bool, func(*Resolved) bool, func(*IDStats) bool, error](&publishFn{})
	register.Iter1[ShardResult]()
	register.Iter1[Resolved]()
	register.Iter1[IDStats]()
}
