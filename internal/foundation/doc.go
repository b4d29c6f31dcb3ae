// Package foundation groups small helpers that know nothing of short URLs and
// that every other group may use: giving long work's CPU to waiting requests
// (yield), bounding the log lines a client can trigger (logbudget), advisory file
// locks (flock), atomic file writes (atomicfile), printing outside text on a
// terminal safely (tty), opening data files without following links (nofollow),
// watching a disk's free space (diskfree), rotating append-only logs
// crash-safely (rotlog) and naming a Markdown heading's anchor (mdanchor). Packages under foundation/ import only the standard
// library and golang.org/x (TestImportRules).
package foundation
