package shorturl

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"testing"
)

// TestMACStreamCounterMode pins the stream past its first 32 bytes (blocks B(1),
// B(2): HMAC over m ‖ uint32_be(i)), which no natural token needs — 23 of 32 bytes
// would have to be rejected — but which docs/api.md documents. The figures were computed
// with Python's hmac module, independently of this code.
func TestMACStreamCounterMode(t *testing.T) {
	const want = "c1dd05887daa109b1f23b75b60c979ef7c64e9460a465b1f86537595288ab03e" +
		"bf9f1352bbe717233d0dfbc971f1cf272c7c010a43b23be34fa76e84082007679de30c796406ffbbd777216a9877742b"
	s := &macStream{mac: hmac.New(sha256.New, []byte("0123456789abcdef0123456789abcdef")), msg: []byte("LNKEXAMPLEACCESSKEY1\x00order-4711")}
	got := make([]byte, 80)
	// Read in odd pieces: block boundaries must not matter.
	for _, r := range [][2]int{{0, 7}, {7, 40}, {40, 80}} {
		if _, err := io.ReadFull(s, got[r[0]:r[1]]); err != nil {
			t.Fatal(err)
		}
	}
	if hex.EncodeToString(got) != want {
		t.Fatalf("stream = %x\nwant     %s", got, want)
	}
}
