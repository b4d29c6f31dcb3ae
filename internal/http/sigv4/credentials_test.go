package sigv4

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// envOf is the pair the environment m gives LoadOrCreate.
func envOf(m map[string]string) Credentials {
	return Credentials{AccessKeyID: m[EnvAccessKeyID], SecretAccessKey: m[EnvSecretAccessKey]}
}

func TestLoadOrCreateEnv(t *testing.T) {
	tests := []struct {
		name        string
		env         map[string]string
		want        Credentials
		wantErrName string // the variable an error must name; "" means no error
	}{
		{
			name: "both set",
			env:  map[string]string{EnvAccessKeyID: "AKIDEXAMPLE", EnvSecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"},
			want: Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"},
		},
		{name: "secret missing", env: map[string]string{EnvAccessKeyID: "AKIDEXAMPLE"}, wantErrName: EnvSecretAccessKey},
		{name: "access key missing", env: map[string]string{EnvSecretAccessKey: "shh"}, wantErrName: EnvAccessKeyID},
		{name: "access key unusable", env: map[string]string{EnvAccessKeyID: "AK/ID", EnvSecretAccessKey: "shh"}, wantErrName: EnvAccessKeyID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			got, path, created, err := LoadOrCreate(dir, envOf(tc.env))
			if tc.wantErrName != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrName) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErrName)
				}
				if s := tc.env[EnvSecretAccessKey]; s != "" && strings.Contains(err.Error(), s) {
					t.Errorf("error %q leaks the secret", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadOrCreate: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("credentials (-want +got):\n%s", diff)
			}
			if path != "" || created {
				t.Errorf("path %q, created %v; want \"\", false", path, created)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("directory created although env credentials were used: %v", err)
			}
		})
	}
}

func TestLoadOrCreateFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "state")
	noEnv := envOf(nil)

	first, path, created, err := LoadOrCreate(dir, noEnv)
	if err != nil {
		t.Fatalf("first LoadOrCreate: %v", err)
	}
	t.Run("created", func(t *testing.T) {
		if !created || path != filepath.Join(dir, CredentialsFile) {
			t.Errorf("path %q, created %v; want %q, true", path, created, filepath.Join(dir, CredentialsFile))
		}
		if !regexp.MustCompile(`^LNK[A-Z2-7]{17}$`).MatchString(first.AccessKeyID) {
			t.Errorf("access key id %q, want LNK + 17 base32 characters", first.AccessKeyID)
		}
		if len(first.SecretAccessKey) != 40 {
			t.Errorf("secret has %d characters, want 40", len(first.SecretAccessKey))
		}
	})
	t.Run("modes", func(t *testing.T) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("file mode %o, want 600", got)
		}
		di, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := di.Mode().Perm(); got != 0o700 {
			t.Errorf("dir mode %o, want 700", got)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			t.Errorf("dir holds %d entries, want only %s (temp file left behind?)", len(entries), CredentialsFile)
		}
	})
	t.Run("content round-trips", func(t *testing.T) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f credentialsJSON
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("file is not JSON: %v", err)
		}
		if diff := cmp.Diff(first, Credentials(f)); diff != "" {
			t.Errorf("file content (-returned +file):\n%s", diff)
		}
	})
	t.Run("reused on second call", func(t *testing.T) {
		second, path2, created2, err := LoadOrCreate(dir, noEnv)
		if err != nil {
			t.Fatalf("second LoadOrCreate: %v", err)
		}
		if created2 || path2 != path {
			t.Errorf("path %q, created %v; want %q, false", path2, created2, path)
		}
		if diff := cmp.Diff(first, second); diff != "" {
			t.Errorf("credentials changed (-first +second):\n%s", diff)
		}
	})
	t.Run("env wins over file", func(t *testing.T) {
		env := map[string]string{EnvAccessKeyID: "AKIDENV", EnvSecretAccessKey: "envsecret"}
		got, p, c, err := LoadOrCreate(dir, envOf(env))
		if err != nil || p != "" || c || got.AccessKeyID != "AKIDENV" {
			t.Errorf("got %v, %q, %v, %v; want env credentials", got, p, c, err)
		}
	})
	t.Run("new pair each directory", func(t *testing.T) {
		other, _, _, err := LoadOrCreate(t.TempDir(), noEnv)
		if err != nil {
			t.Fatal(err)
		}
		if other == first {
			t.Error("two directories got the same generated pair")
		}
	})
}

func TestLoadOrCreateBadFile(t *testing.T) {
	tests := []struct {
		name    string
		content string
	}{
		{name: "not json", content: "AKID:secret-value-here"},
		{name: "empty secret", content: `{"access_key_id":"LNKAAAAAAAAAAAAAAAAA","secret_access_key":""}`},
		{name: "empty object", content: `{}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, CredentialsFile), []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, _, err := LoadOrCreate(dir, envOf(nil))
			if err == nil {
				t.Fatal("want error for unusable credentials file")
			}
			if strings.Contains(err.Error(), "secret-value-here") {
				t.Errorf("error %q quotes file content", err)
			}
		})
	}
}

// TestPersistPairIsSeparate: local Persist's pair lives in its own 0600 file beside
// the management pair, with a different secret, and its environment variables are the
// ones its errors name.
func TestPersistPairIsSeparate(t *testing.T) {
	dir := t.TempDir()
	mgmt, _, _, err := ManagementPair.LoadOrCreate(dir, Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	p, path, created, err := PersistPair.LoadOrCreate(dir, Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	if !created || path != filepath.Join(dir, PersistCredentialsFile) {
		t.Errorf("path %q, created %v; want %q, true", path, created, filepath.Join(dir, PersistCredentialsFile))
	}
	if p.AccessKeyID == mgmt.AccessKeyID || p.SecretAccessKey == mgmt.SecretAccessKey {
		t.Error("local Persist's pair equals the management pair")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("%s mode %o, want 600", PersistCredentialsFile, got)
	}
	again, _, created, err := PersistPair.LoadOrCreate(dir, Credentials{})
	if err != nil || created || again != p {
		t.Errorf("second load: created %v, same pair %v, err %v; want the file's pair", created, again == p, err)
	}

	_, _, _, err = PersistPair.LoadOrCreate(dir, Credentials{AccessKeyID: "AKIDEXAMPLE"})
	if err == nil || !strings.Contains(err.Error(), EnvPersistSecretAccessKey) {
		t.Errorf("half a pair: err = %v, want it to name %s", err, EnvPersistSecretAccessKey)
	}
}
