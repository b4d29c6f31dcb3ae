package mgmtapi

import (
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		ua   string
		want uaClass
	}{
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36", uaClass{"Chrome", "Linux", "desktop"}},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", uaClass{"Safari", "iOS", "mobile"}},
		{"Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", uaClass{"Safari", "iOS", "tablet"}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0", uaClass{"Firefox", "Windows", "desktop"}},
		{"", uaClass{"unknown", "unknown", "unknown"}},
		// A word the parser does not know comes back whole: not a class.
		{strings.Repeat("x", 200), uaClass{"other", "unknown", "unknown"}},
	} {
		if got := classify(tt.ua); got != tt.want {
			t.Errorf("classify(%.40q) = %+v, want %+v", tt.ua, got, tt.want)
		}
	}
}
