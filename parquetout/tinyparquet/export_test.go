package tinyparquet

// For the tests of package tinyparquet_test, which use readers whose
// test kits import parquetout, which imports this package.
var (
	TestSchema   = testSchema
	TestProps    = testProps
	RandomRecord = randomRecord
	WritePqarrow = writePqarrow
	FileProps    = fileProps
	WriteBoth    = writeBoth
	NullRecord   = nullRecord
)
