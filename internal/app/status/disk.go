package status

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/linoone/linoone/internal/app/datadir"
	"github.com/linoone/linoone/internal/foundation/diskfree"
)

// The parts of the data dir that Disk sizes, in the order Write prints them.
const (
	PartFacts     = "facts log"   // facts.jsonl and its rotated files
	PartPersistDB = "persist db"  // local Persist's database
	PartWAL       = "persist wal" // its WAL and shared-memory index
	PartJournal   = "bus journal" // the bus's segments and offsets
	PartDLQ       = "click dlq"
	PartRefused   = "refused" // bus/refused.jsonl and its rotated files
	PartOther     = "other"
)

var partOrder = []string{PartFacts, PartPersistDB, PartWAL, PartJournal, PartDLQ, PartRefused, PartOther}

// refusedBase is the file of the facts Persist refused, in the bus directory.
const refusedBase = "refused.jsonl"

// tmpPrefix begins the name of a file rotlog is compressing.
const tmpPrefix = ".tmp-"

// Disk is the data dir's size by part and its file system's free space.
type Disk struct {
	Parts []Part `json:"parts"`
	Total int64  `json:"total_bytes"`
	// FreeBytes and FreePercent are the space an unprivileged process may still
	// write; absent where the platform does not tell.
	FreeBytes   *uint64  `json:"free_bytes,omitempty"`
	FreePercent *float64 `json:"free_percent,omitempty"`
}

// Part is the bytes of the regular files of one part of the data dir.
type Part struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// SizeDataDir sums the regular files under dir by part; symbolic links are not
// followed (a data dir holds none) and files removed while it walks are skipped.
func SizeDataDir(dir string) (Disk, error) {
	sums := map[string]int64{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil // removed meanwhile: a rotation, a tidy
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		sums[partOf(filepath.ToSlash(rel))] += fi.Size()
		return nil
	})
	if err != nil {
		return Disk{}, err
	}
	var d Disk
	for _, name := range partOrder {
		d.Parts = append(d.Parts, Part{Name: name, Bytes: sums[name]})
		d.Total += sums[name]
	}
	if sp, err := diskfree.Stat(dir); err == nil {
		pct := sp.FreePercent()
		d.FreeBytes, d.FreePercent = &sp.Avail, &pct
	}
	return d, nil
}

// partOf names the part a file of the data dir belongs to, from its path relative
// to the data dir with forward slashes.
func partOf(rel string) string {
	top, rest, nested := strings.Cut(rel, "/")
	// A rotated file being compressed (rotlog's temporary) counts with its log.
	top, rest = strings.TrimPrefix(top, tmpPrefix), strings.TrimPrefix(rest, tmpPrefix)
	switch {
	case !nested && (top == datadir.Facts || strings.HasPrefix(top, datadir.Facts+".")):
		return PartFacts
	case !nested && top == datadir.PersistDB:
		return PartPersistDB
	case !nested && (top == datadir.PersistDB+"-wal" || top == datadir.PersistDB+"-shm"):
		return PartWAL
	case nested && top == datadir.Bus && (rest == refusedBase || strings.HasPrefix(rest, refusedBase+".")):
		return PartRefused
	case nested && top == datadir.Bus:
		return PartJournal
	case nested && top == datadir.DLQ:
		return PartDLQ
	}
	return PartOther
}

// write prints the data dir's size, then one line a part, then the free space.
func (d Disk) write(w io.Writer) {
	fmt.Fprintf(w, "data dir\t%s\n", byteSize(d.Total))
	for _, p := range d.Parts {
		fmt.Fprintf(w, "\t%s\t%s\n", p.Name, byteSize(p.Bytes))
	}
	if d.FreeBytes != nil {
		fmt.Fprintf(w, "free space\t%s (%.1f %%) on the data dir's file system\n", byteSize(int64(*d.FreeBytes)), *d.FreePercent)
	} else {
		fmt.Fprintf(w, "free space\tnot known on this platform\n")
	}
}
