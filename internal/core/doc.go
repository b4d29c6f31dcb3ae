// Package core groups Linoone's domain: what a short URL is and how it is issued,
// resolved and screened (shorturl), the click graph fact (clickfact), GraphSON v3
// and identity hashing (graphson), target hosts (hostname), the deny list
// (denylist) and event identifiers (eventid). Packages under core/ import only
// each other, the standard library and a few pure libraries (ULID, IDNA,
// x/sys), never net/http, the AWS SDK or the generated api; the ports they need
// (a store, a publisher, dead letters) are interfaces they declare. The import
// rules are checked by TestImportRules at the repository's root.
package core
