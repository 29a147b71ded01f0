package testkit

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/convbatch/convbatch"

// TestLayering lists every package of the module with its imports (those
// of its non-test files) and checks that no package outside
// internal/testkit imports a harness, and that the production helpers
// directly under internal/ import nothing of the module but each other.
func TestLayering(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	testkit, internal := module+"/internal/testkit", module+"/internal/"
	helpers := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		if under(pkg, testkit) {
			continue
		}
		helper := strings.HasPrefix(pkg, internal)
		if helper {
			helpers++
		}
		for _, imp := range imports {
			switch {
			case under(imp, testkit):
				t.Errorf("%s imports the test harness %s", pkg, imp)
			case helper && under(imp, module) && !strings.HasPrefix(imp, internal):
				t.Errorf("the production helper %s imports %s, above it", pkg, imp)
			}
		}
	}
	if helpers == 0 {
		t.Fatalf("go list named no production helper under %s:\n%s", internal, out)
	}
}

// under reports whether pkg is dir or a package below it.
func under(pkg, dir string) bool {
	return pkg == dir || strings.HasPrefix(pkg, dir+"/")
}
