// Package local groups what exists only in local mode, standing in for a cloud
// service on one machine: the journaled local bus with its consumer and click DLQ
// (localbus) and local Persist on an embedded SQLite file (localpersist). Packages
// under local/ may import core/ and foundation/, never aws/ (TestImportRules);
// local Persist stands in for a separate service and imports no domain package
// but graphson.
package local
