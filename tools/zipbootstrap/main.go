// Command zipbootstrap packs a Lambda bootstrap binary into a reproducible zip: one
// entry named "bootstrap", Unix mode 0755 (so Lambda can execute it), a fixed
// modification time (1980-01-01 00:00:00, the earliest MS-DOS time), Deflate at the
// best compression level, no extra fields and no data descriptor. The same input
// gives the same bytes with the same Go toolchain, so a rebuilt zip is identical and
// Terraform's source_code_hash does not change without a code change.
//
// Usage: go run ./tools/zipbootstrap IN OUT
//
// OUT is written to a temporary file in its directory and renamed into place, so a
// reader never sees a partial zip.
package main

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
)

// entryName is the only entry of the zip: the file the provided.al2023 runtime runs.
const entryName = "bootstrap"

// entryMode is the entry's Unix mode.
const entryMode os.FileMode = 0o755

// The fixed modification time, 1980-01-01 00:00:00, in MS-DOS date and time format
// (date: (year-1980)<<9 | month<<5 | day; time: 0). FileHeader.Modified is left zero
// on purpose: archive/zip would add an extended-timestamp extra field for it.
const (
	msdosDate = 0<<9 | 1<<5 | 1
	msdosTime = 0
)

// zipVersion20 is "version 2.0" (Deflate), needed to extract and (low byte) made by;
// SetMode puts "Unix" into the high byte of the made-by version.
const zipVersion20 = 20

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "zipbootstrap:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: zipbootstrap IN OUT")
	}
	in, out := args[0], args[1]
	content, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("read bootstrap: %w", err)
	}
	if err := writeFile(out, content); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}

// writeFile writes the zip of content to path through a temporary file and a rename.
func writeFile(path string, content []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := writeZip(tmp, content); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// writeZip writes the zip holding content as its bootstrap entry to w.
func writeZip(w io.Writer, content []byte) error {
	if int64(len(content)) >= math.MaxUint32 {
		return fmt.Errorf("bootstrap is %d bytes; a Lambda zip holds far less and zip64 is not written", len(content))
	}
	var deflated bytes.Buffer
	fw, err := flate.NewWriter(&deflated, flate.BestCompression)
	if err != nil {
		return fmt.Errorf("deflate: %w", err)
	}
	if _, err := fw.Write(content); err != nil {
		return fmt.Errorf("deflate: %w", err)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("deflate: %w", err)
	}

	fh := &zip.FileHeader{
		Name:               entryName,
		Method:             zip.Deflate,
		CreatorVersion:     zipVersion20,
		ReaderVersion:      zipVersion20,
		CRC32:              crc32.ChecksumIEEE(content),
		CompressedSize64:   uint64(deflated.Len()),
		UncompressedSize64: uint64(len(content)),
	}
	// The deprecated MS-DOS fields, not Modified, which would add an extra field.
	//lint:ignore SA1019 Modified would add an extended-timestamp field and change the bytes
	fh.ModifiedDate, fh.ModifiedTime = msdosDate, msdosTime
	fh.SetMode(entryMode) // creator Unix, external attributes 0100755 << 16

	zw := zip.NewWriter(w)
	// CreateRaw writes the sizes and CRC into the local header: no data descriptor.
	ew, err := zw.CreateRaw(fh)
	if err != nil {
		return fmt.Errorf("zip header: %w", err)
	}
	if _, err := ew.Write(deflated.Bytes()); err != nil {
		return fmt.Errorf("zip entry: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("zip directory: %w", err)
	}
	return nil
}
