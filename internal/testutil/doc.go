// Package testutil groups helpers for tests only: free ports (testport), a
// goroutine-safe buffer (syncbuf), golden files (golden) and the JSON Schemas of
// schemas/ compiled for validation (schematest). Only _test.go files import them
// (TestImportRules).
package testutil
