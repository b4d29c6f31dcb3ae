package localbus

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/linoone/linoone/internal/foundation/flock"
)

// Backlog is what waits in a bus's journal for its consumer.
type Backlog struct {
	// Bytes is the journal not delivered yet: past the offset the consumer last
	// saved, or all of it where no consumer has saved one (a click's event takes
	// 1-2 KB).
	Bytes int64
	// Oldest is when the oldest event waiting was published, to the second: the time
	// of its redirect, or of its replay from the DLQ. It is zero when nothing waits,
	// and when that event cannot be read whole (damage, which the consumer steps
	// over and logs).
	Oldest time.Time
}

// ReadBacklog reads the backlog of the bus in dir as its consumer last committed it.
// It takes no lock and writes nothing, so it may run beside serve and a consumer. An
// offset past the newest segment counts from the oldest one, as the consumer then
// reads it; a segment the consumer removes meanwhile makes it read the offset again.
func ReadBacklog(dir string) (Backlog, error) {
	journal, tab := filepath.Join(dir, journalDir), crcTable()
	for try := 0; ; try++ {
		st, _, err := loadOffsetFile(filepath.Join(dir, consumerOffset))
		if err != nil {
			return Backlog{}, fmt.Errorf("bus backlog: %w", err)
		}
		segs, err := listSegments(journal)
		if errors.Is(err, os.ErrNotExist) {
			return Backlog{}, nil // no bus has written a journal here yet
		}
		if err != nil {
			return Backlog{}, fmt.Errorf("bus backlog: %w", err)
		}
		seg, pos := st.Segment, st.Position
		if offsetPastNewest(segs, seg) {
			seg, pos = segs[0], 0
		}
		w, err := waitingFrom(journal, segs, seg, pos, tab)
		var b Backlog
		if err == nil {
			b.Bytes = w.bytes
			if w.bytes > 0 {
				b.Oldest, err = eventTime(segmentPath(journal, w.seg), w.pos, tab)
				if errors.Is(err, os.ErrNotExist) {
					w.moved, err = true, nil
				}
			}
		}
		if w.moved && try < 3 {
			continue
		}
		if err != nil {
			return Backlog{}, fmt.Errorf("bus backlog: %w", err)
		}
		return b, nil
	}
}

// ConsumerHolder reports which process runs the consumer of the bus in dir, from the
// lock it holds (flock.Holder): 0 when none does; known is false where the system
// does not list locks.
func ConsumerHolder(dir string) (pid int, known bool, err error) {
	return flock.Holder(filepath.Join(dir, consumerLock))
}

// waiting is the journal past a consumer position.
type waiting struct {
	bytes int64
	// seg and pos are where the first frame waiting lies, when bytes > 0.
	seg   uint64
	pos   int64
	moved bool // a segment listed was gone when read: delivered and removed meanwhile
}

// waitingFrom sums the bytes of segs, segments of journal, from position pos of
// segment seg on.
func waitingFrom(journal string, segs []uint64, seg uint64, pos int64, tab *crc32.Table) (waiting, error) {
	var w waiting
	for _, s := range segs {
		if s < seg {
			continue
		}
		start, end, err := segmentBoundsAt(segmentPath(journal, s), tab)
		if errors.Is(err, os.ErrNotExist) {
			w.moved = true
			continue
		}
		if err != nil {
			return waiting{}, fmt.Errorf("journal lag: %w", err)
		}
		if s == seg {
			start = max(start, pos)
		}
		if end > start && w.bytes == 0 {
			w.seg, w.pos = s, start
		}
		w.bytes += max(end-start, 0)
	}
	return w, nil
}

// eventTime reads the frame at pos of the segment at path and returns its event's
// time; zero if no whole, valid event lies there.
func eventTime(path string, pos int64, tab *crc32.Table) (time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	var h [frameHeader]byte
	if _, err := f.ReadAt(h[:], pos); err != nil {
		if errors.Is(err, io.EOF) {
			return time.Time{}, nil
		}
		return time.Time{}, fmt.Errorf("read %s at %d: %w", path, pos, err)
	}
	n := binary.LittleEndian.Uint32(h[:])
	if n == 0 || n > maxPayload {
		return time.Time{}, nil
	}
	buf := make([]byte, frameHeader+int(n))
	if _, err := f.ReadAt(buf, pos); err != nil && !errors.Is(err, io.EOF) {
		return time.Time{}, fmt.Errorf("read %s at %d: %w", path, pos, err)
	}
	payload, _, st := parseFrame(buf, tab)
	if st != frameOK {
		return time.Time{}, nil
	}
	var ev struct {
		Time time.Time `json:"time"`
	}
	if json.Unmarshal(payload, &ev) != nil {
		return time.Time{}, nil
	}
	return ev.Time, nil
}
