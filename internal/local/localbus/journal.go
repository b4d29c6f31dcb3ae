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
	"time"

	"github.com/linoone/linoone/internal/foundation/atomicfile"
	"github.com/linoone/linoone/internal/foundation/nofollow"
)

const (
	frameHeader = 8 // length uint32 | crc32c uint32
	// segHeader is the size of a version 2 segment's header (segmentHeader).
	segHeader  = 32
	maxPayload = 256 << 10 // EventBridge's entry limit
	readChunk  = 1 << 20   // consumer and scanner read size; > one whole frame

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

// segMagic opens a version 2 segment. A version 1 segment starts with a frame, whose
// length is never zero, so the two cannot be taken for each other.
var segMagic = [8]byte{0, 0, 0, 0, 'L', 'N', 'J', '2'}

// A version 2 segment is written in place over zeros that were written ahead of it
// (preallocated), so that a batch's fdatasync flushes data only: appending also
// commits the file's new size to the file system's journal, which took about twice
// as long. The file size therefore no longer tells where the frames end; the header
// does:
//
//	magic [8]byte | end uint64 LE | crc32c(end) uint32 LE | 12 zero bytes | frames…
//
// end is the offset just past the last whole frame. A writer updates it after it has
// written a batch's frames and before the batch's fdatasync, so a reader that sees an
// end finds whole frames below it, and a batch that was acknowledged has its frames
// and its end on disk. Its checksum lets a reader tell a header caught mid-update,
// which it reads again, from a valid one. Version 1 segments (frames from offset 0,
// ending at the file size) are still read; writers no longer append to them.
func appendSegmentHeader(b []byte, end int64, tab *crc32.Table) []byte {
	b = append(b, segMagic[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(end))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[len(b)-8:], tab))
	return append(b, make([]byte, segHeader-20)...)
}

// errSegmentHeader reports a version 2 header whose end fails its checksum, or lies
// before the frames, on every read.
var errSegmentHeader = errors.New("damaged segment header")

// errNewerSegment reports a segment whose magic names a format after this program's
// (LNJ3 and on). Neither the writer nor the consumer goes past it: taken for damage,
// it would be stepped over and deleted with every fact in it.
var errNewerSegment = errors.New("journal segment format is newer than this program's")

// newerFormat reports the format a segment's first bytes name when it is one after
// segMagic's.
func newerFormat(h []byte) (byte, bool) {
	if len(h) < len(segMagic) || [7]byte(h[:7]) != [7]byte(segMagic[:7]) {
		return 0, false
	}
	return h[7], h[7] > segMagic[7] && h[7] <= '9'
}

// segmentBoundsAt opens the segment at path for segmentBounds.
func segmentBoundsAt(path string, tab *crc32.Table) (start, end int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	return segmentBounds(f, tab)
}

// segmentBounds reads where the frames of the segment in f start and end: after the
// header and at its end (version 2), or at 0 and the file size (version 1).
func segmentBounds(f *os.File, tab *crc32.Table) (start, end int64, err error) {
	var h [segHeader]byte
	for try := 0; ; try++ {
		n, rerr := f.ReadAt(h[:], 0)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return 0, 0, fmt.Errorf("read header of %s: %w", f.Name(), rerr)
		}
		if n < len(segMagic) || [8]byte(h[:8]) != segMagic {
			if v, ok := newerFormat(h[:n]); ok {
				return 0, 0, fmt.Errorf("%s: format %c, this program's %c: %w (run the newer linoone, or have it deliver the journal first)",
					f.Name(), v, segMagic[7], errNewerSegment)
			}
			if damagedMagic(h[:n]) {
				return 0, 0, fmt.Errorf("%s: magic: %w", f.Name(), errSegmentHeader)
			}
			fi, err := f.Stat()
			if err != nil {
				return 0, 0, fmt.Errorf("stat %s: %w", f.Name(), err)
			}
			return 0, fi.Size(), nil
		}
		end := int64(binary.LittleEndian.Uint64(h[8:]))
		if n >= 20 && crc32.Checksum(h[8:16], tab) == binary.LittleEndian.Uint32(h[16:]) && end >= segHeader {
			return segHeader, end, nil
		}
		if try == 2 {
			return 0, 0, fmt.Errorf("%s: %w", f.Name(), errSegmentHeader)
		}
		// Most likely the writer's update of the end, caught half-way.
		time.Sleep(time.Millisecond)
	}
}

// damagedMagic reports whether the start of a segment that lacks segMagic is still
// a version 2 segment's: four zero bytes, which no version 1 frame starts with (its
// length is never zero), or the magic's second half. Read as version 1, its header
// would be a torn first frame, and the next writer would cut the segment to nothing.
func damagedMagic(h []byte) bool {
	return len(h) >= 4 && [4]byte(h[:4]) == [4]byte(segMagic[:4]) ||
		len(h) >= 8 && [4]byte(h[4:8]) == [4]byte(segMagic[4:])
}

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
		k, err := f.ReadAt(buf[:n], pos)
		if err != nil && !errors.Is(err, io.EOF) {
			return pos, fmt.Errorf("read %s at %d: %w", f.Name(), pos, err)
		}
		chunk := buf[:k] // short when the file ends before size: scratch holds older bytes past it
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
	k, err := f.ReadAt(buf, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, false, fmt.Errorf("read %s at %d: %w", f.Name(), from, err)
	}
	buf = buf[:k]
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

// syncFile flushes f to the disk: its data (fdatasync(2), see datasync) when
// dataOnly, else its data and metadata (fsync(2)). Every sync of this package goes
// through it, so that tests can see each one, in order, and hold one back.
var syncFile = func(f *os.File, dataOnly bool) error {
	if dataOnly {
		return datasync(f)
	}
	return f.Sync()
}

// syncDir makes the creation, renaming or removal of files in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	serr := syncFile(d, false)
	cerr := d.Close()
	if serr != nil {
		return fmt.Errorf("fsync dir %s: %w", dir, serr)
	}
	if cerr != nil {
		return fmt.Errorf("close dir %s: %w", dir, cerr)
	}
	return nil
}

// writeFileAtomic replaces path with data (atomicfile.Replace), through syncFile,
// as every sync of this package.
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.Replace(path, data, atomicfile.Options{Sync: func(f *os.File) error { return syncFile(f, false) }})
}

func writeSyncClose(f *os.File, data []byte) error {
	_, werr := f.Write(data)
	var serr error
	if werr == nil {
		serr = syncFile(f, false)
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

const (
	pageSize = 4 << 10
	// preallocChunk is how far ahead of its end a writer zero-fills a segment that
	// was not zero-filled whole ahead of time.
	preallocChunk = 1 << 20
)

// errStopped reports a segment filled ahead that was not needed any more.
var errStopped = errors.New("stopped")

// zeros is what segments are preallocated with; never written to.
var zeros = make([]byte, 256<<10)

// writeZeros writes zeros over [from, to) of f.
func writeZeros(f *os.File, from, to int64) error {
	for from < to {
		n := min(int64(len(zeros)), to-from)
		if _, err := f.WriteAt(zeros[:n], from); err != nil {
			return fmt.Errorf("preallocate %s: %w", f.Name(), err)
		}
		from += n
	}
	return nil
}

// newSegment makes a version 2 segment of size bytes (its header, then zeros) and
// links it to path only once it is synced, so that no reader ever sees a segment
// without its header. It fails if path exists.
func newSegment(dir, path string, size int64, tab *crc32.Table) (*os.File, error) {
	f, err := makeSegment(dir, size, tab, nil)
	if err != nil {
		return nil, err
	}
	return linkSegment(f, path)
}

// makeSegment writes an empty version 2 segment of size bytes under a temporary
// name in dir (fillSegment, with stop), removing it if that fails.
func makeSegment(dir string, size int64, tab *crc32.Table, stop <-chan struct{}) (*os.File, error) {
	f, err := os.CreateTemp(dir, tempSegmentPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("create journal segment: %w", err)
	}
	if err := fillSegment(f, size, tab, stop); err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// linkSegment gives f, made by makeSegment, its name path (failing if path exists)
// and reopens it under that name; f and its temporary name go either way.
func linkSegment(f *os.File, path string) (*os.File, error) {
	err := os.Link(f.Name(), path)
	_ = os.Remove(f.Name())
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("create journal segment: %w", err)
	}
	return openSegmentRW(path)
}

// openSegmentRW opens the segment at path for writing, under that name (the one
// its messages give).
func openSegmentRW(path string) (*os.File, error) {
	f, err := nofollow.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open journal segment: %w", err)
	}
	return f, nil
}

// tempSegmentPrefix names segments being made (newSegment, aheadSegment); a writer
// alone on a journal removes those a crash left.
const tempSegmentPrefix = ".tmp-segment-"

// fillSegment writes an empty version 2 segment of size bytes into the new file f
// and syncs it, a MiB at a time. Given a stop channel, it rests twice as long as each
// MiB took (a segment filled ahead is needed only once the active one is full, and a
// flush of many MiB at once would hold the disk's queue while the writer's
// fdatasyncs of live batches wait behind it), and gives up with errStopped once stop
// is closed.
func fillSegment(f *os.File, size int64, tab *crc32.Table, stop <-chan struct{}) error {
	if _, err := f.WriteAt(appendSegmentHeader(nil, segHeader, tab), 0); err != nil {
		return fmt.Errorf("write header of %s: %w", f.Name(), err)
	}
	const step = 1 << 20
	from := int64(segHeader)
	for {
		start := time.Now()
		to := min(from+step, size)
		if err := writeZeros(f, from, to); err != nil {
			return err
		}
		if err := syncFile(f, true); err != nil {
			return err // names the call and the file
		}
		if from = to; from >= size {
			return nil
		}
		if stop != nil {
			rest := time.NewTimer(2 * time.Since(start))
			select {
			case <-stop:
				rest.Stop()
				return errStopped
			case <-rest.C:
			}
		}
	}
}

// aheadSegment is the next segment of a lone writer, zero-filled by a goroutine of
// its own while the writer fills the active one, so that rolling costs a link.
type aheadSegment struct {
	done chan struct{}
	stop chan struct{} // closed by discard: the filling stops
	f    *os.File
	size int64
	err  error
}

func startAhead(dir string, size int64, tab *crc32.Table) *aheadSegment {
	a := &aheadSegment{done: make(chan struct{}), stop: make(chan struct{}), size: max(size, segHeader)}
	go func() {
		defer close(a.done)
		a.f, a.err = makeSegment(dir, a.size, tab, a.stop)
	}()
	return a
}

// discard stops the goroutine and removes the segment it made.
func (a *aheadSegment) discard() {
	close(a.stop)
	<-a.done
	if a.f != nil {
		_ = a.f.Close()
		_ = os.Remove(a.f.Name())
	}
}
