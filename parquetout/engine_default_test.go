package parquetout

import (
	"strings"
	"testing"
)

// TestWithEngine checks the engine the tables and the rewrites take from
// the environment: the tiny engine when it names none, the engine it
// names, and an unknown name refused (the default kept) by the variable's
// name; an engine the configuration already names is kept.
func TestWithEngine(t *testing.T) {
	for _, tc := range []struct {
		env, set, want string
		err            bool
	}{
		{env: "", want: EngineTiny},
		{env: EngineTiny, want: EngineTiny},
		{env: EnginePqarrow, want: EnginePqarrow},
		{env: EngineParquetGo, want: EngineParquetGo},
		{env: "fastparquet", want: EngineDefault, err: true},
		{env: EngineParquetGo, set: EnginePqarrow, want: EnginePqarrow},
	} {
		t.Run(tc.env+"/"+tc.set, func(t *testing.T) {
			t.Setenv(EngineEnv, tc.env)
			got, err := withEngine(encoderConfig{depth: 1, engine: tc.set})
			if got.engine != tc.want || (err != nil) != tc.err {
				t.Fatalf("withEngine with %s=%q, engine %q: %q, %v; want %q, error %v", EngineEnv, tc.env, tc.set, got.engine, err, tc.want, tc.err)
			}
			if err != nil && !strings.Contains(err.Error(), EngineEnv) {
				t.Errorf("error %q does not name %s", err, EngineEnv)
			}
		})
	}
}

// TestRewriteTakesTheEngine checks that a rewrite of a shared part asks
// the environment for its engine, as the tables do (it wrote with pqarrow
// whatever the variable said before the tiny engine became the default):
// an unknown name fails it, naming the variable.
func TestRewriteTakesTheEngine(t *testing.T) {
	t.Setenv(EngineEnv, "fastparquet")
	_, err := rewriteParts(nil, "part-00000.parquet", []string{"missing.parquet"}, "usage", TableOptions{}, nil)
	if err == nil || !strings.Contains(err.Error(), EngineEnv) {
		t.Fatalf("rewrite with %s=fastparquet: %v, want an error naming the variable", EngineEnv, err)
	}
}
