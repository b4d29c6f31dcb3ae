package sigv4

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/linoone/linoone/internal/foundation/atomicfile"
)

// The environment variables that carry the management API's credential pair (read by
// the config package, named in [LoadOrCreate]'s errors) and the file LoadOrCreate keeps
// it in.
const (
	EnvAccessKeyID     = "LINOONE_ACCESS_KEY_ID"
	EnvSecretAccessKey = "LINOONE_SECRET_ACCESS_KEY"
	CredentialsFile    = "credentials.json"
)

// The same for local Persist's own pair: the management API's callers and the
// callers of Persist hold different secrets.
const (
	EnvPersistAccessKeyID     = "LINOONE_PERSIST_ACCESS_KEY_ID"
	EnvPersistSecretAccessKey = "LINOONE_PERSIST_SECRET_ACCESS_KEY"
	PersistCredentialsFile    = "persist-credentials.json"
)

// Pair names where one local credential pair lives: its file in the data directory
// and the environment variables that override it.
type Pair struct {
	File               string
	EnvAccessKeyID     string
	EnvSecretAccessKey string
}

// The two local pairs.
var (
	ManagementPair = Pair{File: CredentialsFile, EnvAccessKeyID: EnvAccessKeyID, EnvSecretAccessKey: EnvSecretAccessKey}
	PersistPair    = Pair{File: PersistCredentialsFile, EnvAccessKeyID: EnvPersistAccessKeyID, EnvSecretAccessKey: EnvPersistSecretAccessKey}
)

// accessKeyPrefix marks generated local access key ids, which are 20
// characters long like AWS's.
const (
	accessKeyPrefix = "LNK"
	accessKeyLen    = 20
)

// credentialsJSON is the on-disk form of the local credential pair.
type credentialsJSON struct {
	AccessKeyID     string `json:"access_key_id"`
	SecretAccessKey string `json:"secret_access_key"`
}

// LoadOrCreate returns the local management API credentials: ManagementPair.LoadOrCreate.
func LoadOrCreate(dir string, fromEnv Credentials) (creds Credentials, path string, created bool, err error) {
	return ManagementPair.LoadOrCreate(dir, fromEnv)
}

// LoadOrCreate returns the pair p names.
//
// fromEnv is the pair given in p's environment variables. When both are set it uses
// them and returns path "" (one set without the other is an error naming the missing
// one). Otherwise it reads <dir>/<p.File>, or, when that does not exist, generates a
// random pair and writes it there atomically with mode 0600 (creating dir with mode
// 0700), reporting created. The path lets the caller tell the user where the secret
// is; never print the secret.
func (p Pair) LoadOrCreate(dir string, fromEnv Credentials) (creds Credentials, path string, created bool, err error) {
	id, secret := fromEnv.AccessKeyID, fromEnv.SecretAccessKey
	switch {
	case id != "" && secret != "":
		creds = Credentials{AccessKeyID: id, SecretAccessKey: secret}
		if err := creds.validate(); err != nil {
			return Credentials{}, "", false, fmt.Errorf("credentials from %s and %s: %w", p.EnvAccessKeyID, p.EnvSecretAccessKey, err)
		}
		return creds, "", false, nil
	case id != "":
		return Credentials{}, "", false, fmt.Errorf("%s is set but %s is not", p.EnvAccessKeyID, p.EnvSecretAccessKey)
	case secret != "":
		return Credentials{}, "", false, fmt.Errorf("%s is set but %s is not", p.EnvSecretAccessKey, p.EnvAccessKeyID)
	}

	if dir == "" {
		return Credentials{}, "", false, errors.New("credentials directory is empty")
	}
	path = filepath.Join(dir, p.File)
	creds, err = readCredentials(path)
	if err == nil {
		return creds, path, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return Credentials{}, "", false, err
	}

	creds = generate()
	won, err := writeNew(dir, path, creds)
	if err != nil {
		return Credentials{}, "", false, err
	}
	if !won {
		// Another process created the file between our read and write:
		// use its pair so both agree.
		creds, err = readCredentials(path)
		if err != nil {
			return Credentials{}, "", false, err
		}
		return creds, path, false, nil
	}
	return creds, path, true, nil
}

func readCredentials(path string) (Credentials, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Credentials{}, fmt.Errorf("read credentials: %w", err)
	}
	var f credentialsJSON
	if err := json.Unmarshal(b, &f); err != nil {
		// The decoder's message may quote file content: leave it out.
		return Credentials{}, fmt.Errorf("read credentials %s: not valid JSON", path)
	}
	creds := Credentials(f)
	if err := creds.validate(); err != nil {
		return Credentials{}, fmt.Errorf("read credentials %s: %w", path, err)
	}
	return creds, nil
}

// generate returns a random pair: "LNK" plus 17 base32 characters, and a
// 40-character secret carrying 240 random bits.
func generate() Credentials {
	secret := make([]byte, 30)
	_, _ = rand.Read(secret) // never returns an error since Go 1.24
	return Credentials{
		AccessKeyID:     accessKeyPrefix + rand.Text()[:accessKeyLen-len(accessKeyPrefix)],
		SecretAccessKey: base64.RawURLEncoding.EncodeToString(secret),
	}
}

// writeNew writes creds to path, mode 0600, atomically. It reports false, and
// leaves the existing file alone, when path already exists.
func writeNew(dir, path string, creds Credentials) (bool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("create credentials directory: %w", err)
	}
	b, err := json.MarshalIndent(credentialsJSON(creds), "", "  ")
	if err != nil {
		return false, fmt.Errorf("encode credentials: %w", err)
	}
	b = append(b, '\n')

	// Create fails when path exists, so a concurrent start cannot replace a pair
	// that another process already handed out.
	created, err := atomicfile.Create(path, b, atomicfile.Options{Perm: 0o600})
	if err != nil {
		return false, fmt.Errorf("write credentials: %w", err)
	}
	return created, nil
}
