package serve

import (
	"context"
	"time"

	"github.com/linoone/linoone/internal/app/config"
	"github.com/linoone/linoone/internal/foundation/diskfree"
)

// healthDiskLow is what GET /healthz names as degraded while the data dir's file
// system has less free space than LINOONE_DISK_LOW_PERCENT: warned before the disk
// fills, rather than at the first write that fails (issue 47).
const healthDiskLow = "disk-low"

// diskCheckEvery is how often the data dir's free space is looked at.
const diskCheckEvery = 2 * time.Second

// watchDisk checks the data dir's free space every diskCheckEvery until ctx ends,
// logging each crossing of the threshold once, at WARN into low and INFO back out.
func (s *stack) watchDisk(ctx context.Context, cfg config.Serve) {
	log := s.log
	s.disk = &diskfree.Watch{Path: cfg.DataDir, LowPercent: cfg.Bounds.DiskLowPercent, Every: diskCheckEvery,
		OnCross: func(low bool, sp diskfree.Space) {
			attrs := []any{"data_dir", cfg.DataDir, "free_percent", sp.FreePercent(), "avail_bytes", sp.Avail,
				"low_percent", cfg.Bounds.DiskLowPercent}
			if low {
				log.Warn("the data dir's disk is nearly full; /healthz reports disk-low", attrs...)
				return
			}
			log.Info("the data dir's disk has room again", attrs...)
		}}
	s.disk.Low(time.Now())
	go func() {
		t := time.NewTicker(diskCheckEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				s.disk.Low(now)
			}
		}
	}()
}
