// Package testkit holds, in its subdirectories, the test harnesses: code
// that only tests import (Parquet read-back, the independent readers
// through Node.js, the chart measurements in Chromium, the crash
// property, the fuzz seeds). Production helpers live beside it under
// internal/ (crashpoint, exitcode, rfc3339) and import no package of the
// module above them; a harness may import any production package, so no
// production package imports a harness. Its test checks both rules with
// go list.
package testkit
