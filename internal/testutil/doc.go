// Package testutil groups helpers for tests only: free ports (testport), a
// goroutine-safe buffer (syncbuf), golden files (golden), the process's CPU time (cputime), the JSON Schemas of
// schemas/ compiled for validation (schematest) and the slow layers that -short
// skips (testlayer). Only _test.go files import them (TestImportRules).
package testutil
