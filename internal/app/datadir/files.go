package datadir

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/linoone/linoone/internal/foundation/nofollow"
	"github.com/linoone/linoone/internal/http/sigv4"
)

// ErrLinked is CheckFiles' error for a data dir that holds a symbolic link.
var ErrLinked = errors.New("holds a symbolic link")

// CheckFiles refuses a data dir in which any entry, at any depth, is a symbolic link:
// every file serve writes there would otherwise be open to redirection, e.g. a
// facts.jsonl linked to a world-readable file elsewhere that then receives every
// visitor's address (issue 44, finding 7). The data dir itself may be a link. Files
// are also opened without following links (package nofollow); this check names the
// link before anything starts. It warns of a file holding a secret (the idempotency
// secret, the credential pairs) that group or others may read.
func CheckFiles(dir string, log *slog.Logger) error {
	for _, name := range []string{IdempotencySecretFile, sigv4.CredentialsFile, sigv4.PersistCredentialsFile} {
		path := filepath.Join(dir, name)
		if err := nofollow.Private(path); errors.Is(err, nofollow.ErrShared) {
			log.Warn("a secret in the data dir can be read by other users; chmod 600 it", "file", path, "err", err)
		} else if err != nil {
			return fmt.Errorf("data dir: %w", err)
		}
	}
	return checkLinks(dir)
}

func checkLinks(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	for _, e := range ents {
		path := filepath.Join(dir, e.Name())
		switch {
		case e.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			return fmt.Errorf("data dir %w: %s -> %s; linoone does not follow links there (a file it writes could land anywhere): replace the link with the file itself, or remove it",
				ErrLinked, path, target)
		case e.IsDir():
			if err := checkLinks(path); err != nil {
				return err
			}
		}
	}
	return nil
}

// writePid writes this process's pid into the lock file at path, without following
// a link there.
func writePid(path string) error {
	f, err := nofollow.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
