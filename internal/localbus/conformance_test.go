package localbus

import (
	"github.com/linoone/linoone/internal/persist"
	"github.com/linoone/linoone/internal/shorturl"
)

// The adapters the integrator wires together fit the ports.
var (
	_ Ingester             = (*persist.Client)(nil)
	_ shorturl.Publisher   = (*Bus)(nil)
	_ shorturl.DeadLetters = (*DLQ)(nil)
)
