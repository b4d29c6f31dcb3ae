// Package app groups the composition roots: configuration (config), the resolver
// stack shared by the Resolve Lambda and serve (resolverstack), the Lambdas' AWS
// wiring (awswire), local mode's serve stack and data dir (serve, datadir), and
// what the CLI's commands do beyond parsing their arguments (status, producer,
// smoke, console, and signing, which picks the credentials their management API
// calls are signed with).
// Packages under app/ may import every other group; only main packages (cmd/,
// lambdas/, tools/ and go:generate commands) and app/ itself import them
// (TestImportRules), so the adapters never learn how they are assembled.
package app
