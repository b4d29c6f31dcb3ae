package config

import (
	"strings"
	"testing"

	"github.com/linoone/linoone/internal/local/localbus"
)

var defaultBounds = Bounds{FactsLog: localbus.FactsLogOptions{MaxSize: 32 << 20, Keep: 8}, DiskLowPercent: 5}

func TestBounds(t *testing.T) {
	c, err := LoadServe(env(map[string]string{
		"LINOONE_FACTS_LOG": "OFF", "LINOONE_FACTS_LOG_MAX_MB": "4", "LINOONE_FACTS_LOG_FILES": "2", "LINOONE_DISK_LOW_PERCENT": "12.5",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Bounds{FactsLog: localbus.FactsLogOptions{MaxSize: 4 << 20, Keep: 2, Off: true}, DiskLowPercent: 12.5}
	if c.Bounds != want {
		t.Errorf("bounds %+v, want %+v", c.Bounds, want)
	}
	_, err = LoadServe(env(map[string]string{
		"LINOONE_FACTS_LOG": "sometimes", "LINOONE_FACTS_LOG_MAX_MB": "0", "LINOONE_FACTS_LOG_FILES": "x", "LINOONE_DISK_LOW_PERCENT": "100",
	}))
	for _, name := range []string{"LINOONE_FACTS_LOG:", "LINOONE_FACTS_LOG_MAX_MB", "LINOONE_FACTS_LOG_FILES", "LINOONE_DISK_LOW_PERCENT"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
}
