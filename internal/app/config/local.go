package config

import (
	"time"

	"github.com/linoone/linoone/internal/http/sigv4"
	"github.com/linoone/linoone/internal/local/localbus"
)

// defaultClickBufferBytes is the memory serve holds click facts in while neither
// the bus nor the DLQ can write them (a full disk).
const defaultClickBufferBytes = 64 << 20

// LocalPersist is how a local command reaches Persist.
type LocalPersist struct {
	Addr           string        // LINOONE_PERSIST_ADDR, default 127.0.0.1:8082
	URL            string        // LINOONE_PERSIST_URL, default http://<Addr>
	Start          bool          // LINOONE_PERSIST_URL is unset: serve starts local Persist on Addr
	Timeout        time.Duration // LINOONE_PERSIST_TIMEOUT, default 2s
	InlineLiterals bool          // LINOONE_PERSIST_INLINE_LITERALS: Neptune mode
	// Credentials is local Persist's SigV4 pair given in LINOONE_PERSIST_ACCESS_KEY_ID
	// and LINOONE_PERSIST_SECRET_ACCESS_KEY; unset, the pair in the data directory.
	Credentials sigv4.Credentials
}

func (r *reader) localPersist() LocalPersist {
	p := LocalPersist{
		Addr:           r.addr("LINOONE_PERSIST_ADDR", defaultPersistAddr),
		URL:            r.httpURL("LINOONE_PERSIST_URL", ""),
		Timeout:        r.persistTimeout(),
		InlineLiterals: r.boolean("LINOONE_PERSIST_INLINE_LITERALS"),
		Credentials:    r.pair(sigv4.PersistPair),
	}
	if p.URL == "" {
		p.URL, p.Start = "http://"+p.Addr, true
	}
	return p
}

// credentials is the management API pair given in the environment.
func (r *reader) credentials() sigv4.Credentials { return r.pair(sigv4.ManagementPair) }

// pair is the credential pair p given in the environment, as it is: a pair with one
// half missing is sigv4.Pair.LoadOrCreate's to report.
func (r *reader) pair(p sigv4.Pair) sigv4.Credentials {
	return sigv4.Credentials{AccessKeyID: r.getenv(p.EnvAccessKeyID), SecretAccessKey: r.getenv(p.EnvSecretAccessKey)}
}

// Serve is the configuration of linoone serve.
type Serve struct {
	Logging
	ResolverAddr     string                // LINOONE_RESOLVER_ADDR, default 127.0.0.1:8080
	ManagementAddr   string                // LINOONE_MANAGEMENT_ADDR, default 127.0.0.1:8081
	DataDir          string                // LINOONE_DATA_DIR, default ./.linoone
	Region           string                // LINOONE_REGION, else AWS_REGION, default us-east-1
	Environment      string                // LINOONE_ENVIRONMENT, default local
	ResolverBaseURL  string                // LINOONE_RESOLVER_BASE_URL, default http://<ResolverAddr>
	Persist          LocalPersist          // LINOONE_PERSIST_*
	Credentials      sigv4.Credentials     // LINOONE_ACCESS_KEY_ID, LINOONE_SECRET_ACCESS_KEY: unset, a pair in DataDir
	BusFault         string                // LINOONE_BUS_FAULT: "" or "always"
	BusSync          localbus.SyncMode     // LINOONE_BUS_SYNC, default each
	Consumer         localbus.ConsumerMode // LINOONE_CONSUMER, default inline
	PublishTimeout   time.Duration         // LINOONE_PUBLISH_TIMEOUT, default 500ms
	CacheSize        int                   // LINOONE_RESOLVER_CACHE_SIZE, default 100000 (0 disables)
	MetricsNamespace string                // LINOONE_METRICS_NAMESPACE, default Linoone: the EMF namespace
	EMF              bool                  // LINOONE_EMF=on|off, default on only on Lambda (AWS_LAMBDA_FUNCTION_NAME set)
	ReservedHosts    []string              // LINOONE_RESERVED_HOSTS: targets there are refused
	ClickBufferBytes int                   // LINOONE_CLICK_BUFFER_BYTES, default 64 MiB: facts held while bus and DLQ fail
	ClickLogFacts    int                   // LINOONE_CLICK_LOG_FACTS_PER_SECOND, default 0 (no limit): past the buffer
	DenyListFile     string                // LINOONE_DENYLIST_FILE, default <DataDir>/denylist.txt (absent: nothing blocked)
	Bounds           Bounds                // LINOONE_FACTS_LOG*, LINOONE_DISK_LOW_PERCENT
}

// LoadServe reads the configuration of linoone serve.
func LoadServe(getenv func(string) string) (Serve, error) {
	r := newReader(getenv)
	c := Serve{
		Logging:          r.logging(),
		ResolverAddr:     r.resolverAddr(),
		ManagementAddr:   r.addr("LINOONE_MANAGEMENT_ADDR", defaultManagementAddr),
		DataDir:          r.dataDir(),
		Region:           r.region(),
		Environment:      r.environment(),
		Persist:          r.localPersist(),
		Credentials:      r.credentials(),
		BusFault:         r.busFault(),
		BusSync:          parse(r, "LINOONE_BUS_SYNC", "each", localbus.ParseSyncMode),
		Consumer:         parse(r, "LINOONE_CONSUMER", "inline", localbus.ParseConsumerMode),
		PublishTimeout:   r.publishTimeout(),
		CacheSize:        r.cacheSize(),
		MetricsNamespace: r.metricsNamespace(),
		EMF:              r.emf(),
		ReservedHosts:    r.reservedHosts(),
		ClickBufferBytes: r.intRange("LINOONE_CLICK_BUFFER_BYTES", defaultClickBufferBytes, 0, 16<<30),
		ClickLogFacts:    r.intRange("LINOONE_CLICK_LOG_FACTS_PER_SECOND", 0, 0, 1_000_000),
		Bounds:           r.bounds(),
	}
	c.ResolverBaseURL = r.resolverBaseURL(c.ResolverAddr)
	c.DenyListFile = r.denyListFile(c.DataDir)
	if err := r.err(); err != nil {
		return Serve{}, err
	}
	return c, nil
}

// Consume is the configuration of linoone consume.
type Consume struct {
	Logging
	DataDir string       // LINOONE_DATA_DIR, default ./.linoone
	Region  string       // LINOONE_REGION, else AWS_REGION, default us-east-1: Persist's SigV4 region
	Persist LocalPersist // LINOONE_PERSIST_*
	Bounds  Bounds       // LINOONE_FACTS_LOG*
}

// LoadConsume reads the configuration of linoone consume.
func LoadConsume(getenv func(string) string) (Consume, error) {
	r := newReader(getenv)
	c := Consume{Logging: r.logging(), DataDir: r.dataDir(), Region: r.region(), Persist: r.localPersist(), Bounds: r.bounds()}
	if err := r.err(); err != nil {
		return Consume{}, err
	}
	return c, nil
}

// DenyList is the configuration of linoone block, unblock and blocked.
type DenyList struct {
	DataDir string // LINOONE_DATA_DIR, default ./.linoone: the serve whose list it is
	File    string // LINOONE_DENYLIST_FILE, default <DataDir>/denylist.txt
	FileSet bool   // whether LINOONE_DENYLIST_FILE named the file
}

// LoadDenyList reads the configuration of the deny list commands.
func LoadDenyList(getenv func(string) string) (DenyList, error) {
	r := newReader(getenv)
	c := DenyList{DataDir: r.dataDir(), FileSet: getenv("LINOONE_DENYLIST_FILE") != ""}
	c.File = r.denyListFile(c.DataDir)
	if err := r.err(); err != nil {
		return DenyList{}, err
	}
	return c, nil
}

// DLQ is the configuration of linoone dlq.
type DLQ struct {
	DataDir string // LINOONE_DATA_DIR, default ./.linoone
}

// LoadDLQ reads the configuration of linoone dlq.
func LoadDLQ(getenv func(string) string) (DLQ, error) {
	r := newReader(getenv)
	c := DLQ{DataDir: r.dataDir()}
	if err := r.err(); err != nil {
		return DLQ{}, err
	}
	return c, nil
}

// Replay is the configuration of linoone replay.
type Replay struct {
	DataDir  string // LINOONE_DATA_DIR, default ./.linoone
	Region   string // LINOONE_REGION, else AWS_REGION, default us-east-1: the events' region
	BusFault string // LINOONE_BUS_FAULT: "" or "always"
}

// LoadReplay reads the configuration of linoone replay.
func LoadReplay(getenv func(string) string) (Replay, error) {
	r := newReader(getenv)
	c := Replay{DataDir: r.dataDir(), Region: r.region(), BusFault: r.busFault()}
	if err := r.err(); err != nil {
		return Replay{}, err
	}
	return c, nil
}

// Shorten is the configuration of linoone shorten, the producer CLI.
type Shorten struct {
	ManagementURL string            // LINOONE_MANAGEMENT_URL, default http://<LINOONE_MANAGEMENT_ADDR>
	DataDir       string            // LINOONE_DATA_DIR, default ./.linoone: where serve keeps the pair
	Region        string            // LINOONE_REGION, else AWS_REGION, default us-east-1: the SigV4 region
	Credentials   sigv4.Credentials // LINOONE_ACCESS_KEY_ID, LINOONE_SECRET_ACCESS_KEY
}

// LoadShorten reads the configuration of linoone shorten.
func LoadShorten(getenv func(string) string) (Shorten, error) {
	r := newReader(getenv)
	c := Shorten{
		ManagementURL: r.managementURL(),
		DataDir:       r.dataDir(),
		Region:        r.region(),
		Credentials:   r.credentials(),
	}
	if err := r.err(); err != nil {
		return Shorten{}, err
	}
	return c, nil
}

// managementURL is LINOONE_MANAGEMENT_URL, default http://<LINOONE_MANAGEMENT_ADDR>.
func (r *reader) managementURL() string {
	u, addr := r.httpURL("LINOONE_MANAGEMENT_URL", ""), r.addr("LINOONE_MANAGEMENT_ADDR", defaultManagementAddr)
	if u == "" {
		u = "http://" + addr
	}
	return u
}

// Status is the configuration of linoone status.
type Status struct {
	DataDir       string       // LINOONE_DATA_DIR, default ./.linoone
	ResolverAddr  string       // LINOONE_RESOLVER_ADDR, default 127.0.0.1:8080
	ManagementURL string       // LINOONE_MANAGEMENT_URL, default http://<LINOONE_MANAGEMENT_ADDR>
	Persist       LocalPersist // LINOONE_PERSIST_*: local Persist is asked where serve starts it
}

// LoadStatus reads the configuration of linoone status.
func LoadStatus(getenv func(string) string) (Status, error) {
	r := newReader(getenv)
	c := Status{DataDir: r.dataDir(), ResolverAddr: r.resolverAddr(), ManagementURL: r.managementURL(), Persist: r.localPersist()}
	if err := r.err(); err != nil {
		return Status{}, err
	}
	return c, nil
}
