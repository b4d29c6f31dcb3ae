// Package local groups what exists only in local mode, standing in for a cloud
// service on one machine: the journaled local bus with its consumer and click DLQ
// (localbus), local Persist on an embedded SQLite file (localpersist) and the deny
// list file that stands in for the SSM parameter (denyfile). Packages
// under local/ may import core/ and foundation/, never aws/ (TestImportRules);
// local Persist stands in for a separate service and imports no domain package
// but graphson.
package local
