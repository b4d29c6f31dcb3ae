package localbus

import "fmt"

// SyncMode says when the bus acknowledges a publish (LINOONE_BUS_SYNC).
type SyncMode int

// The sync modes. The zero value is SyncEach.
const (
	// SyncEach acknowledges after the batch's write and fsync (group commit).
	SyncEach SyncMode = iota
	// SyncInterval acknowledges after the batch's write(2) reached the kernel, with an
	// fsync every BusOptions.SyncEvery.
	SyncInterval
)

// String returns the mode's name as LINOONE_BUS_SYNC spells it.
func (m SyncMode) String() string {
	switch m {
	case SyncEach:
		return "each"
	case SyncInterval:
		return "interval"
	default:
		return fmt.Sprintf("SyncMode(%d)", int(m))
	}
}

// ParseSyncMode reads a sync mode name: "each" or "interval".
func ParseSyncMode(s string) (SyncMode, error) {
	switch s {
	case "each":
		return SyncEach, nil
	case "interval":
		return SyncInterval, nil
	default:
		return SyncEach, fmt.Errorf("%q is neither each nor interval", s)
	}
}

// ConsumerMode says who delivers the local bus into Persist (LINOONE_CONSUMER).
type ConsumerMode int

// The consumer modes. The zero value is ConsumerInline.
const (
	// ConsumerInline: linoone serve runs the Consumer.
	ConsumerInline ConsumerMode = iota
	// ConsumerExternal: serve does not; linoone consume runs it, as production
	// consumers run apart from the resolver.
	ConsumerExternal
)

// String returns the mode's name as LINOONE_CONSUMER spells it.
func (m ConsumerMode) String() string {
	switch m {
	case ConsumerInline:
		return "inline"
	case ConsumerExternal:
		return "external"
	default:
		return fmt.Sprintf("ConsumerMode(%d)", int(m))
	}
}

// ParseConsumerMode reads a consumer mode name: "inline" or "external".
func ParseConsumerMode(s string) (ConsumerMode, error) {
	switch s {
	case "inline":
		return ConsumerInline, nil
	case "external":
		return ConsumerExternal, nil
	default:
		return ConsumerInline, fmt.Errorf("%q is neither inline nor external", s)
	}
}
