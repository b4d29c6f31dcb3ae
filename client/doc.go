// Package client is the Go client of Linoone's management API, for producers: the
// services that issue short URLs from their own code.
//
// It is built on the client that oapi-codegen generates from openapi.yaml
// (package api/management), and adds what every producer would otherwise write
// itself:
//
//   - SigV4 signing (service execute-api) with aws-sdk-go-v2's signer, from the
//     AWS default credential chain or the credentials given with [WithCredentials];
//   - retries that never issue a short URL twice: every [Client.Shorten] and
//     [Client.ShortenBatch] carries an Idempotency-Key (the caller's, or a random
//     one made for the call), so a request retried after a network error, a 429 or a
//     5xx finds the short URL its first attempt stored. Retries back off
//     exponentially with jitter, honour Retry-After, and never sleep past the
//     context's deadline;
//   - errors to branch on: every refusal is a [*Problem] (the API's RFC 9457
//     problem), which errors.Is matches against [ErrTargetInvalid],
//     [ErrTargetBlocked], [ErrNotFound], [ErrUnavailable] and the other sentinels.
//
// The listing of short URLs (GET /links, as an iter.Seq2 over every page) and QR
// codes (GET /links/{token}/qr) are not here yet: they join once openapi.yaml has
// those operations (issue 41), through the same retrying, signing call path.
//
// docs/clients.md shows the client beside the TypeScript one.
package client
