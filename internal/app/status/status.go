// Package status is what `linoone status` reports of a local install: whether a
// serve runs on the data dir and which process delivers its journal, whether
// serve's listeners answer GET /healthz, how much of the journal waits for its
// consumer, and how many click facts wait in the click DLQ. It takes no lock and
// writes nothing, so it runs beside serve and linoone consume.
package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/foundation/flock"
	"github.com/linoone/linoone/internal/foundation/tty"
	"github.com/linoone/linoone/internal/local/localbus"
)

// statusProbeTimeout bounds each listener's answer to linoone status.
const statusProbeTimeout = 2 * time.Second

// Report is what linoone status prints (Write), and with --json its document.
type Report struct {
	Serve      Serve     `json:"serve"`
	Resolver   Listener  `json:"resolver"`
	Management Listener  `json:"management"`
	Persist    *Listener `json:"persist,omitempty"` // only where serve starts local Persist
	Journal    Journal   `json:"journal"`
	ClickDLQ   ClickDLQ  `json:"click_dlq"`
	Disk       Disk      `json:"disk"`
}

// Listener is one listener's GET /healthz: "ok", "degraded" (with what is) or
// "down" (no answer, or not the health document: with the error).
type Listener struct {
	part     string   // resolver, management or persist
	URL      string   `json:"url"`
	Status   string   `json:"status"`
	Degraded []string `json:"degraded,omitempty"`
	Error    string   `json:"error,omitempty"`
	lag      *int64   // the resolver's bus_lag_bytes: present when serve's consumer is inline
}

// Serve is whether a serve holds the data dir, from the lock it takes there:
// "running" (with its pid), "stopped", or "unknown" where the system does not list
// the locks held (only Linux does).
type Serve struct {
	DataDir string `json:"data_dir"`
	State   string `json:"state"`
	PID     int    `json:"pid,omitempty"`
	// Addresses says where the listeners' addresses came from: "recorded" by the
	// running serve in the data dir, or the "environment" (LINOONE_RESOLVER_ADDR,
	// LINOONE_MANAGEMENT_ADDR or _URL, LINOONE_PERSIST_ADDR): where no serve runs,
	// where the system lists no locks, or where serve recorded none.
	Addresses string `json:"addresses"`
}

type Journal struct {
	WaitingBytes  int64      `json:"waiting_bytes"`
	OldestWaiting *time.Time `json:"oldest_waiting,omitempty"`
	// Consumer is who delivers the journal: "inline" (serve), "external" (linoone
	// consume, ConsumerPID), "none" or "unknown". It comes from the consumer's lock
	// where the system lists locks, else from the resolver's /healthz, whose
	// bus_lag_bytes only an inline consumer gives.
	Consumer    string `json:"consumer"`
	ConsumerPID int    `json:"consumer_pid,omitempty"`
}

type ClickDLQ struct {
	Waiting int `json:"waiting"`
}

// ErrNotAllUp is Check's error when a listener is down or degraded: the report
// says which.
var ErrNotAllUp = errors.New("not every listener answers ok")

// Check reads the data dir and asks the listeners for GET /healthz. The report is
// whole whatever the listeners answer; the error is ErrNotAllUp (wrapped, naming
// them) when one is down or degraded, or why the data dir could not be read.
func Check(ctx context.Context, cfg config.Status) (Report, error) {
	var rep Report
	holders, err := rep.readDataDir(cfg.DataDir)
	if err != nil {
		return Report{}, err
	}
	probes := rep.listeners(cfg, holders)
	var wg sync.WaitGroup
	for _, p := range probes {
		wg.Go(func() { p.probe(ctx) })
	}
	wg.Wait()
	rep.whoRuns(holders)
	var notUp []string
	for _, p := range probes {
		if p.Status != "ok" {
			notUp = append(notUp, p.part+" "+p.Status)
		}
	}
	if len(notUp) == 0 {
		return rep, nil
	}
	err = fmt.Errorf("%w: %s", ErrNotAllUp, strings.Join(notUp, ", "))
	if rep.Serve.PID != 0 && rep.Serve.Addresses == addressesFromEnv {
		err = fmt.Errorf("%w (serve, pid %d, holds the data dir: were LINOONE_RESOLVER_ADDR, LINOONE_MANAGEMENT_ADDR and LINOONE_PERSIST_ADDR the same when it started?)", err, rep.Serve.PID)
	}
	return rep, err
}

// Where status found the listeners' addresses (Serve.Addresses).
const (
	addressesRecorded = "recorded" // by the serve holding the data dir (datadir.ListeningFile)
	addressesFromEnv  = "environment"
)

// listeners sets the listeners to ask and returns them: where the serve holding the
// data dir recorded them, or else where this environment says.
func (r *Report) listeners(cfg config.Status, h lockHolders) []*Listener {
	r.Serve.Addresses = addressesFromEnv
	r.Resolver = Listener{part: "resolver", URL: "http://" + cfg.ResolverAddr}
	r.Management = Listener{part: "management", URL: strings.TrimSuffix(cfg.ManagementURL, "/")}
	persistAddr := ""
	if cfg.Persist.Start {
		persistAddr = cfg.Persist.Addr
	}
	// A record left by a serve that was killed names a pid that holds no lock; a
	// record that cannot be read is as good as none.
	if l, ok, err := datadir.ReadListening(cfg.DataDir); err == nil && ok && h.known && l.PID == h.serve {
		r.Serve.Addresses = addressesRecorded
		r.Resolver.URL, r.Management.URL, persistAddr = "http://"+l.Resolver, "http://"+l.Management, l.Persist
	}
	probes := []*Listener{&r.Resolver, &r.Management}
	if persistAddr != "" {
		r.Persist = &Listener{part: "persist", URL: "http://" + persistAddr}
		probes = append(probes, r.Persist)
	}
	return probes
}

// lockHolders are the processes holding the data dir's locks: serve's, and its bus
// consumer's; known is false where the system does not list locks.
type lockHolders struct {
	serve, consumer int
	known           bool
}

// readDataDir fills in what the data dir tells (the journal waiting, the click DLQ)
// and returns who holds its locks.
func (r *Report) readDataDir(dataDir string) (lockHolders, error) {
	r.Serve.DataDir = dataDir
	if abs, err := filepath.Abs(dataDir); err == nil {
		r.Serve.DataDir = abs
	}
	var h lockHolders
	var err error
	if h.serve, h.known, err = flock.Holder(filepath.Join(dataDir, datadir.ServeLock)); err != nil {
		return lockHolders{}, err
	}
	if h.consumer, _, err = localbus.ConsumerHolder(filepath.Join(dataDir, datadir.Bus)); err != nil {
		return lockHolders{}, err
	}
	backlog, err := localbus.ReadBacklog(filepath.Join(dataDir, datadir.Bus))
	if err != nil {
		return lockHolders{}, err
	}
	r.Journal.WaitingBytes = backlog.Bytes
	if !backlog.Oldest.IsZero() {
		r.Journal.OldestWaiting = &backlog.Oldest
	}
	if r.ClickDLQ.Waiting, err = localbus.WaitingInDLQ(filepath.Join(dataDir, datadir.DLQ)); err != nil {
		return lockHolders{}, err
	}
	if r.Disk, err = SizeDataDir(dataDir); err != nil {
		return lockHolders{}, err
	}
	return h, nil
}

// whoRuns says whether serve runs and who delivers the journal: from the locks'
// holders where they are known, else from what the resolver answered.
func (r *Report) whoRuns(h lockHolders) {
	r.Serve.State, r.Journal.Consumer = "unknown", "unknown"
	switch {
	case h.known:
		r.Serve.State, r.Serve.PID = "stopped", h.serve
		if h.serve != 0 {
			r.Serve.State = "running"
		}
		switch h.consumer {
		case 0:
			r.Journal.Consumer = "none"
		case h.serve:
			r.Journal.Consumer = "inline"
		default:
			r.Journal.Consumer, r.Journal.ConsumerPID = "external", h.consumer
		}
	case r.Resolver.Status != "down":
		r.Journal.Consumer = "external"
		if r.Resolver.lag != nil {
			r.Journal.Consumer = "inline"
		}
	}
}

// probe asks the listener for GET /healthz.
func (l *Listener) probe(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, statusProbeTimeout)
	defer cancel()
	l.Status = "down"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.URL+"/healthz", nil)
	if err != nil {
		l.Error = err.Error()
		return
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // not the method and URL again
		}
		l.Error = err.Error()
		return
	}
	defer res.Body.Close()
	var h struct {
		Status   string   `json:"status"`
		Degraded []string `json:"degraded"`
		Lag      *int64   `json:"bus_lag_bytes"`
	}
	err = json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&h)
	switch {
	case res.StatusCode != http.StatusOK:
		l.Error = "GET /healthz answered " + res.Status
	case err != nil:
		l.Error = "GET /healthz: " + err.Error()
	case h.Status != "ok" && h.Status != "degraded":
		l.Error = fmt.Sprintf("GET /healthz: status %q", h.Status)
	default:
		l.Status, l.Degraded, l.lag = h.Status, h.Degraded, h.Lag
	}
}

// Write prints the report as a table, one line a part; now dates the oldest click
// waiting.
func (r Report) Write(w io.Writer, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	switch r.Serve.State {
	case "running":
		fmt.Fprintf(tw, "serve\tpid %d, on %s\n", r.Serve.PID, tty.Cell(r.Serve.DataDir, 200))
	case "stopped":
		fmt.Fprintf(tw, "serve\tnot running on %s\n", tty.Cell(r.Serve.DataDir, 200))
	default:
		fmt.Fprintf(tw, "serve\ton %s\n", tty.Cell(r.Serve.DataDir, 200))
	}
	line := func(l *Listener) {
		state := l.Status
		switch {
		case l.Status == "degraded":
			state += ": " + tty.Cell(strings.Join(l.Degraded, ", "), 200)
		case l.Error != "":
			state += ": " + tty.Cell(l.Error, 200)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", l.part, tty.Cell(l.URL, 100), state)
	}
	line(&r.Resolver)
	line(&r.Management)
	if r.Persist != nil {
		line(r.Persist)
	}
	j := r.Journal
	switch {
	case j.WaitingBytes == 0:
		fmt.Fprintf(tw, "journal\tevery click delivered into Persist\n")
	case j.OldestWaiting != nil:
		fmt.Fprintf(tw, "journal\t%s waiting for the consumer; the oldest click from %s (%s ago)\n",
			byteSize(j.WaitingBytes), j.OldestWaiting.UTC().Format(time.RFC3339), now.Sub(*j.OldestWaiting).Round(time.Second))
	default:
		fmt.Fprintf(tw, "journal\t%s waiting for the consumer\n", byteSize(j.WaitingBytes))
	}
	switch {
	case j.Consumer == "external" && j.ConsumerPID != 0:
		fmt.Fprintf(tw, "\tlinoone consume (pid %d) delivers it\n", j.ConsumerPID)
	case j.WaitingBytes == 0:
	case j.Consumer == "none":
		fmt.Fprintf(tw, "\tno consumer is running: serve delivers it (LINOONE_CONSUMER=inline), or linoone consume does\n")
	case j.Consumer == "external":
		fmt.Fprintf(tw, "\tserve runs no consumer (LINOONE_CONSUMER=external): linoone consume delivers it\n")
	}
	if r.ClickDLQ.Waiting == 0 {
		fmt.Fprintf(tw, "click DLQ\tno click fact waiting\n")
	} else {
		fmt.Fprintf(tw, "click DLQ\t%d click facts waiting: linoone dlq lists them, linoone replay republishes them\n", r.ClickDLQ.Waiting)
	}
	r.Disk.write(tw)
	return tw.Flush()
}

// byteSize is n bytes for a person: "312 bytes", "48.2 MB".
func byteSize(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	default:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	}
}
