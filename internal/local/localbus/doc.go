// Package localbus is Linoone's local-mode event plumbing: a durable on-disk bus that
// stands in for EventBridge, the consumer that closes the loop (ingesting each fact's
// GraphSON into Persist and appending the event to a JSONL log), and a durable click
// DLQ that stands in for SQS, with replay.
//
// # Bus
//
// Bus implements shorturl.Publisher. Publish wraps the fact in an EventBridge-shaped
// event and returns nil only once the event is appended to the journal and fsync'ed.
// Publishers never write or sync themselves: they hand their framed record to one
// writer goroutine that writes everything pending in one write(2), syncs once and
// acknowledges the whole batch (group commit); while it syncs the next batch fills.
// The writer writes over zeros it wrote ahead (a MiB ahead, or a whole next segment,
// zero-filled by a goroutine of its own once the active one is half full), so that
// a batch's fdatasync flushes data and commits nothing to the file system's journal;
// appending took about twice as long per batch.
// A publisher whose ctx ends before its acknowledgement gets ctx.Err(), but its record
// may still be written and delivered: consumers dedupe by idempotency key, as they
// must on AWS anyway.
//
// Several processes (linoone serve and linoone replay) may publish to one bus
// directory. The first to open it keeps flock(LOCK_EX) on journal.lock and, while it
// is alone, writes each batch with one write(2) (and one fsync): no lock, no stat. A
// second writer announces itself in journal.writers/ and waits for the lock; within
// writersCheckEvery the first notices, and from then on each batch is written under
// the lock, after re-reading which segment is active and where its frames end (a
// writer that died mid-batch leaves bytes past the end, which the next batch
// overwrites). When the others are gone, the one left takes the lock for good again.
// See writers.go.
//
// The consumer takes no lock: a writer publishes a segment's end in its header only
// once the frames below it are written, so the consumer finds whole frames below
// the end it reads.
//
// # On-disk layout
//
//	<bus dir>/journal.lock                writers' flock: held by a lone writer, else per batch
//	<bus dir>/journal.writers/<pid>-<id>  a writer waiting to share the journal (flock'ed)
//	<bus dir>/journal/000000000001.log    segments, rolled at BusOptions.SegmentSize
//	<bus dir>/journal/000000000002.log    (default 64 MiB, zero-filled ahead of the end)
//	<bus dir>/journal/.tmp-segment-…      the next segment, being zero-filled
//	<bus dir>/consumer.lock               flock held by the one running Consumer
//	<bus dir>/consumer.offset             {"segment":…,"position":…,"facts_size":…}
//	<bus dir>/refused.jsonl               facts Persist refused, one line each (see Delivery)
//	<facts path>                          one EventBridge event per line (facts.jsonl)
//	<facts path>.<time stamp>.gz          facts logs moved aside, compressed (Keep of them)
//	<dlq dir>/<failed_at>-<key>.json      one dead letter per file, e.g.
//	                                      20261129T101112345Z-shorturl_ev_01K….json
//	<dlq dir>/invalid/                    files that are not dead letters, set aside
//	<dlq dir>/.replay.lock                flock held by the one running replay
//
// A segment is a 32-byte header, which holds where its frames end (see
// appendSegmentHeader), then a sequence of records framed as
//
//	length uint32 LE | crc32c(payload) uint32 LE | payload (one event's JSON)
//
// A writer that opens the journal alone goes on in a new segment, never in the one
// it found: after a crash of the machine that one can hold less on disk than a
// consumer read from the page cache and saved as its offset; the consumer reads on
// past an older segment shorter than its offset, but stops with an error at the
// newest one, which only a crash with no writer started since, or a damaged offset,
// leaves shorter than its offset (skipping to its end would skip the clicks written
// below the offset since). The end may also cover a batch whose bytes never reached
// the disk (one that was never acknowledged): its frames fail their checksums, and
// the consumer steps over them. A damaged header leaves its segment to readers, who
// read its frames (each checks itself) once a newer segment exists. Segments written
// before the header existed (frames up to the file size) are still read; their torn
// tail is truncated. The consumer deletes a segment once it has delivered it to the
// end and a newer one exists.
//
// Publish checks the detail only in O(1) (an object by its first and last bytes;
// one with line breaks is compacted, which validates it): its callers are the fact
// builder and DLQ replay, whose details are valid JSON already. Validating again cost
// more than the rest of Publish on every redirect, and a detail that is not JSON
// cannot harm the journal's framing; the consumer skips its event.
//
// # Delivery
//
// The consumer is at least once. It decodes each event once, checking its shape
// (envelope, the click fact's constants, one vertex and one edge) and taking the
// fact's two GraphSON elements as written; it does not recompute identities, Persist
// verifies them. For each batch it ingests one merged GraphSON document, each
// distinct element once (the fact builder's encoding is deterministic, so the vertex
// of many clicks on one short URL is the same bytes), appends the events to the facts
// log and fsyncs it, and only then moves its offset (temp file, fsync, rename).
// Drain, and Run while no redirects are served, keep up to three batches in Persist: while
// the oldest is committed, the next ones are read, assembled and ingested. Batches are still
// committed one at a time in journal order; one that Persist took while the one ahead
// of it failed waits for that one, and if the consumer stops first, both are read
// again. A segment read to its end is deleted once a batch of the next one is
// committed; damage is stepped over only with no batch in flight. If
// Persist rejects the merged document (ConsumerOptions.IsRejected), the consumer
// ingests the batch's events one by one and skips those Persist rejects, so that one
// bad event does not block the queue; any other failure is retried with backoff
// without moving the offset. A fact it skips is kept: appended whole to refused.jsonl
// and synced before the offset moves past it, as an ERROR line with the fact in
// graph_fact, the shape of the serve log's "click fact lost to log" lines, which
// linoone recover --from-log republishes once Persist takes it.
//
// A crash before the offset moved redelivers the batch: Persist ingest is idempotent
// (identity-hashed ids), and the facts log is cut back to the size recorded with the
// offset before the batch is written again, so the file itself holds each journal
// record once; a reader tailing it may still have seen the lines that were cut. The
// log is at least once all the same: a fact published twice (a publish that timed out
// after its record was journaled, then replayed from the DLQ; a log recovered twice)
// is two records. Readers dedupe by idempotency_key.
//
// The facts log is bounded (ConsumerOptions.FactsLog): before a batch that would take
// it past MaxSize, the consumer moves it aside (facts.jsonl.<UTC time stamp>), opens a
// new one and records its size, 0, with the offset, all before the batch is appended;
// a goroutine gzips what was moved aside and keeps the newest Keep files (see
// foundation/rotlog). Every step ends in an fsync, so a kill at any of them loses no
// line. It may also be rotated from outside: the consumer keeps it open and looks at
// its path once per batch: moved aside (or removed), it is followed by a new one from
// the next batch on; cut (copy-truncate), it is written on from its new end. Either
// way its new size is saved with the offset before a batch is appended, so that a
// crash in that batch cuts the new file back to where it stood. The log is opened
// without following a symbolic link (one in its place is refused).
package localbus
