package config

import (
	"strconv"
	"strings"

	"github.com/linoone/linoone/internal/local/localbus"
)

// defaultDiskLowPercent is the free space of the data dir's file system under which
// /healthz reports disk-low.
const defaultDiskLowPercent = 5

// Bounds is what keeps local mode's data dir bounded and warns before its disk fills.
type Bounds struct {
	// FactsLog: LINOONE_FACTS_LOG (on or off, default on), LINOONE_FACTS_LOG_MAX_MB
	// (size at which facts.jsonl is rotated, default 32), LINOONE_FACTS_LOG_FILES
	// (rotated files kept compressed, default 8).
	FactsLog localbus.FactsLogOptions
	// DiskLowPercent is LINOONE_DISK_LOW_PERCENT, default 5: /healthz reports
	// disk-low while the data dir's file system has less free space than that (0
	// turns the check off).
	DiskLowPercent float64
}

func (r *reader) bounds() Bounds {
	var b Bounds
	switch v := strings.ToLower(r.get("LINOONE_FACTS_LOG", "on")); v {
	case "on":
	case "off":
		b.FactsLog.Off = true
	default:
		r.bad("LINOONE_FACTS_LOG", "%q is neither on nor off", v)
	}
	b.FactsLog.MaxSize = int64(r.intRange("LINOONE_FACTS_LOG_MAX_MB", localbus.DefaultFactsLogMaxSize>>20, 1, 1<<20)) << 20
	b.FactsLog.Keep = r.intRange("LINOONE_FACTS_LOG_FILES", localbus.DefaultFactsLogKeep, 1, 10_000)
	b.DiskLowPercent = defaultDiskLowPercent
	if v := r.get("LINOONE_DISK_LOW_PERCENT", ""); v != "" {
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || !(p >= 0 && p < 100) {
			r.bad("LINOONE_DISK_LOW_PERCENT", "%q is not a percentage from 0 to under 100", v)
		} else {
			b.DiskLowPercent = p
		}
	}
	return b
}
