package localbus

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

const (
	frameHeader = 8         // length uint32 | crc32c uint32
	maxPayload  = 256 << 10 // EventBridge's entry limit
	readChunk   = 1 << 20   // consumer and scanner read size; > one whole frame

	journalDir   = "journal"
	journalLock  = "journal.lock"
	segmentExt   = ".log"
	segmentWidth = 12
)

// frameStatus is what lies at a journal position.
type frameStatus int

const (
	frameOK         frameStatus = iota
	frameEOF                    // nothing: a clean end
	frameIncomplete             // fewer bytes than the header announces
	frameCorrupt                // impossible length or wrong checksum
)

func crcTable() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// appendFrame appends payload framed as length | crc32c | payload.
func appendFrame(b, payload []byte, tab *crc32.Table) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, tab))
	return append(b, payload...)
}

// parseFrame reads the frame at the start of b: its payload and its whole size.
func parseFrame(b []byte, tab *crc32.Table) ([]byte, int, frameStatus) {
	if len(b) == 0 {
		return nil, 0, frameEOF
	}
	if len(b) < frameHeader {
		return nil, 0, frameIncomplete
	}
	n := binary.LittleEndian.Uint32(b)
	if n == 0 || n > maxPayload {
		return nil, 0, frameCorrupt
	}
	end := frameHeader + int(n)
	if len(b) < end {
		return nil, 0, frameIncomplete
	}
	payload := b[frameHeader:end]
	if crc32.Checksum(payload, tab) != binary.LittleEndian.Uint32(b[4:]) {
		return nil, 0, frameCorrupt
	}
	return payload, end, frameOK
}

// scanValid returns the end of the run of whole, valid frames in f that starts at
// from, reading no further than size. It reads through scratch, grown as needed.
func scanValid(f *os.File, from, size int64, tab *crc32.Table, scratch *[]byte) (int64, error) {
	if want := int(min(int64(readChunk), size-from)); cap(*scratch) < want {
		*scratch = make([]byte, want)
	}
	buf := (*scratch)[:cap(*scratch)]
	pos := from
	for pos < size {
		n := min(int64(len(buf)), size-pos)
		if _, err := f.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return pos, fmt.Errorf("read %s at %d: %w", f.Name(), pos, err)
		}
		chunk := buf[:n]
		off := 0
		for {
			_, m, st := parseFrame(chunk[off:], tab)
			if st != frameOK {
				break
			}
			off += m
		}
		if off == 0 {
			// No whole frame here: either garbage, or a frame cut by the chunk
			// boundary, which cannot happen since a frame fits in a chunk.
			return pos, nil
		}
		pos += int64(off)
	}
	return pos, nil
}

// findFrame looks for the first position after from, below size, where a valid
// frame starts. It serves only to step over damaged bytes in the middle of a
// segment; ok is false when there is none.
func findFrame(f *os.File, from, size int64, tab *crc32.Table) (int64, bool, error) {
	if size-from <= 1 {
		return 0, false, nil
	}
	buf := make([]byte, size-from)
	if _, err := f.ReadAt(buf, from); err != nil && !errors.Is(err, io.EOF) {
		return 0, false, fmt.Errorf("read %s at %d: %w", f.Name(), from, err)
	}
	for i := 1; i < len(buf); i++ {
		if _, _, st := parseFrame(buf[i:], tab); st == frameOK {
			return from + int64(i), true, nil
		}
	}
	return 0, false, nil
}

func segmentName(n uint64) string {
	s := strconv.FormatUint(n, 10)
	if len(s) < segmentWidth {
		s = strings.Repeat("0", segmentWidth-len(s)) + s
	}
	return s + segmentExt
}

func segmentPath(dir string, n uint64) string {
	return filepath.Join(dir, segmentName(n))
}

// listSegments returns the segment numbers in dir, ascending.
func listSegments(dir string) ([]uint64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list journal segments: %w", err)
	}
	var segs []uint64
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, segmentExt) || len(name) != segmentWidth+len(segmentExt) {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSuffix(name, segmentExt), 10, 64)
		if err != nil || n == 0 {
			continue
		}
		segs = append(segs, n)
	}
	slices.Sort(segs)
	return segs, nil
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("stat %s: %w", path, err)
	}
}

// syncDir makes the creation, renaming or removal of files in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return fmt.Errorf("fsync dir %s: %w", dir, serr)
	}
	if cerr != nil {
		return fmt.Errorf("close dir %s: %w", dir, cerr)
	}
	return nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory: write, fsync, rename, fsync the directory.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("create temp for %s: %w", path, err)
	}
	if err := writeSyncClose(tmp, data); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return syncDir(dir)
}

func writeSyncClose(f *os.File, data []byte) error {
	_, werr := f.Write(data)
	var serr error
	if werr == nil {
		serr = f.Sync()
	}
	cerr := f.Close()
	switch {
	case werr != nil:
		return fmt.Errorf("write %s: %w", f.Name(), werr)
	case serr != nil:
		return fmt.Errorf("fsync %s: %w", f.Name(), serr)
	case cerr != nil:
		return fmt.Errorf("close %s: %w", f.Name(), cerr)
	}
	return nil
}
