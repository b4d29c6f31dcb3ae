package datadir

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/foundation/atomicfile"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// IdempotencySecretFile keys the tokens Idempotency-Keys derive. Losing it changes
// every derived token: a retry after that mints anew.
const IdempotencySecretFile = "idempotency-secret"

// IdempotencySecret reads the data dir's idempotency secret or, on first start,
// writes a new one (256 random bits as 43 base64url characters) with mode 0600,
// atomically: a concurrent start that lost the race reads the winner's. The HMAC
// key is the file's text without surrounding whitespace, as on AWS it is the SSM
// parameter's value.
func IdempotencySecret(dir string) (secret []byte, path string, created bool, err error) {
	path = filepath.Join(dir, IdempotencySecretFile)
	if secret, err = readSecret(path); !errors.Is(err, fs.ErrNotExist) {
		return secret, path, false, err
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // never fails since Go 1.24
	text := base64.RawURLEncoding.EncodeToString(raw)
	created, err = atomicfile.Create(path, []byte(text+"\n"), atomicfile.Options{Perm: 0o600})
	if err != nil {
		return nil, path, false, fmt.Errorf("idempotency secret: %w", err)
	}
	if !created { // another start won: use its secret
		secret, err := readSecret(path)
		return secret, path, false, err
	}
	return []byte(text), path, true, nil
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

// ServeCredentials are the management API's credentials: the environment pair
// (fromEnv), or the pair in the data dir, created on first start.
func ServeCredentials(dir string, fromEnv sigv4.Credentials, log *slog.Logger) (sigv4.Credentials, error) {
	creds, credsPath, created, err := sigv4.LoadOrCreate(dir, fromEnv)
	if err != nil {
		return sigv4.Credentials{}, err
	}
	if credsPath != "" {
		// Where the pair is, never the secret itself.
		log.Info("management api credentials", "access_key_id", creds.AccessKeyID, "credentials_file", credsPath, "created", created)
	}
	return creds, nil
}

// PersistCredentials are local Persist's own SigV4 pair: the environment pair, or
// the pair in the data dir. serve creates it on first start (create); consume only
// reads it, since a new random pair would not match the one serve's Persist checks.
func PersistCredentials(dir string, fromEnv sigv4.Credentials, create bool, log *slog.Logger) (sigv4.Credentials, error) {
	p := sigv4.PersistPair
	if !create && fromEnv == (sigv4.Credentials{}) {
		if _, err := os.Stat(filepath.Join(dir, p.File)); err != nil {
			return sigv4.Credentials{}, fmt.Errorf("no local Persist credentials: set %s and %s, or %s",
				p.EnvAccessKeyID, p.EnvSecretAccessKey, StartServeFirst(dir))
		}
	}
	creds, path, created, err := p.LoadOrCreate(dir, fromEnv)
	if err != nil {
		return sigv4.Credentials{}, fmt.Errorf("local persist credentials: %w", err)
	}
	if path != "" {
		// Where the pair is, never the secret itself.
		log.Info("local persist credentials", "access_key_id", creds.AccessKeyID, "credentials_file", path, "created", created)
	}
	return creds, nil
}

// ProducerCredentials are the SigV4 credentials of the producer CLI: the
// environment pair, or the pair serve wrote into the data dir. Unlike serve, it
// never creates one: a new random pair would not match the server's.
func ProducerCredentials(dir string, fromEnv sigv4.Credentials) (sigv4.Credentials, error) {
	if fromEnv == (sigv4.Credentials{}) {
		if _, err := os.Stat(filepath.Join(dir, sigv4.CredentialsFile)); err != nil {
			return sigv4.Credentials{}, fmt.Errorf("no credentials: set %s and %s, or %s",
				sigv4.EnvAccessKeyID, sigv4.EnvSecretAccessKey, StartServeFirst(dir))
		}
	}
	creds, _, _, err := sigv4.LoadOrCreate(dir, fromEnv)
	return creds, err
}
