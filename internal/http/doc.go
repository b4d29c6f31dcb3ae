// Package http groups the HTTP edges: the resolver API on net/http (httpapi) and
// the redirect fast path (fastresolver), the SigV4-checked management API
// (mgmtapi), its /docs page (apidocs) and the SigV4 signer and verifier (sigv4).
// They convert wire types to calls into core/ and back. Packages under http/ may
// import core/, foundation/ and the generated api, never local/ or aws/: the
// same handlers serve on Lambda and in local mode (TestImportRules).
package http
