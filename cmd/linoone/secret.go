package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/linoone/linoone/internal/core/shorturl"
)

// idempotencySecretFile, inside LINOONE_DATA_DIR, keys the tokens Idempotency-Keys
// derive. Losing it changes every derived token: a retry after that mints anew.
const idempotencySecretFile = "idempotency-secret"

// idempotencySecret reads the data dir's idempotency secret or, on first start,
// writes a new one (256 random bits as 43 base64url characters) with mode 0600,
// atomically: a concurrent start that lost the race reads the winner's. The HMAC
// key is the file's text without surrounding whitespace, as on AWS it is the SSM
// parameter's value.
func idempotencySecret(dir string) (secret []byte, path string, created bool, err error) {
	path = filepath.Join(dir, idempotencySecretFile)
	if secret, err = readSecret(path); !errors.Is(err, fs.ErrNotExist) {
		return secret, path, false, err
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // never fails since Go 1.24
	text := base64.RawURLEncoding.EncodeToString(raw)
	tmp, err := os.CreateTemp(dir, ".idempotency-secret-*")
	if err != nil {
		return nil, path, false, fmt.Errorf("idempotency secret: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op once linked
	_, err = tmp.WriteString(text + "\n")
	if err = errors.Join(err, tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
		return nil, path, false, fmt.Errorf("idempotency secret: %w", err)
	}
	switch err := os.Link(tmp.Name(), path); {
	case err == nil:
		return []byte(text), path, true, nil
	case errors.Is(err, fs.ErrExist): // another start won: use its secret
		secret, err := readSecret(path)
		return secret, path, false, err
	default:
		return nil, path, false, fmt.Errorf("idempotency secret: %w", err)
	}
}

func readSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := strings.TrimSpace(string(b))
	if len(s) < shorturl.MinIdempotencySecretBytes {
		return nil, fmt.Errorf("idempotency secret %s: shorter than %d bytes; delete it to have a new one made (tokens derived before change)", path, shorturl.MinIdempotencySecretBytes)
	}
	return []byte(s), nil
}
