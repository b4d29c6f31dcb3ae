package localbus

import (
	"github.com/linoone/linoone/internal/core/shorturl"
	"github.com/linoone/linoone/internal/persist"
)

// The adapters the integrator wires together fit the ports.
var (
	_ Ingester             = (*persist.Client)(nil)
	_ shorturl.Publisher   = (*Bus)(nil)
	_ shorturl.DeadLetters = (*DLQ)(nil)
)
