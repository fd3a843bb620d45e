module github.com/parharness/parharness

go 1.26.8
