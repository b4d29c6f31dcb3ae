// Package persist is the HTTP client of Persist, the identity-hashed graph store:
// synchronous GraphSON v3 ingest and Gremlin queries answered in the Gremlin Server
// HTTP shape. It implements the domain's Store port. User input reaches Gremlin only
// as bindings, or — for servers that ignore bindings (Amazon Neptune) — as a quoted
// literal after it passed the token whitelist; target URLs never enter a query.
//
// Its folder also holds hotset, the resolver's cache in front of any Store. Both
// are used on AWS and locally alike, so they import only core/ and foundation/,
// never local/, aws/ or http/ (TestImportRules).
package persist
