package discovery

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Input errors, matched with errors.Is.
var (
	ErrInvalidDomain = errors.New("invalid domain")
	ErrUnknownRegion = errors.New("unknown aws region")
	ErrInvalidBus    = errors.New("invalid event bus")
	ErrInvalidAPIID  = errors.New("invalid resolver api id")
	ErrInvalidToken  = errors.New("invalid probe token")
	ErrInvalidPrefix = errors.New("invalid path prefix")
	ErrInvalidServer = errors.New("invalid dns server")
)

// partition is what discovery needs to know about an AWS partition.
type partition struct {
	name      string
	dnsSuffix string
}

// regionPartition returns the partition of a known region. The list follows
// the partitions file of aws-sdk-go-v2 v1.48.0; ISO partitions are left out.
func regionPartition(region string) (partition, bool) {
	switch region {
	case "af-south-1", "ap-east-1", "ap-east-2", "ap-northeast-1", "ap-northeast-2",
		"ap-northeast-3", "ap-south-1", "ap-south-2", "ap-southeast-1", "ap-southeast-2",
		"ap-southeast-3", "ap-southeast-4", "ap-southeast-5", "ap-southeast-6",
		"ap-southeast-7", "ca-central-1", "ca-west-1", "eu-central-1", "eu-central-2",
		"eu-north-1", "eu-south-1", "eu-south-2", "eu-west-1", "eu-west-2", "eu-west-3",
		"il-central-1", "me-central-1", "me-south-1", "me-west-1", "mx-central-1",
		"sa-east-1", "sa-west-1", "us-east-1", "us-east-2", "us-west-1", "us-west-2":
		return partition{name: "aws", dnsSuffix: "amazonaws.com"}, true
	case "cn-north-1", "cn-northwest-1":
		return partition{name: "aws-cn", dnsSuffix: "amazonaws.com.cn"}, true
	case "eusc-de-east-1":
		return partition{name: "aws-eusc", dnsSuffix: "amazonaws.eu"}, true
	case "us-gov-east-1", "us-gov-west-1":
		return partition{name: "aws-us-gov", dnsSuffix: "amazonaws.com"}, true
	}
	return partition{}, false
}

// dnsSuffix is the DNS suffix of execute-api endpoints in region.
func dnsSuffix(region string) string {
	p, ok := regionPartition(region)
	if !ok {
		return "amazonaws.com"
	}
	return p.dnsSuffix
}

// ParseDomain validates a custom domain: RFC 1123 labels, at least two of
// them, at most 253 characters, a non-numeric top-level label. It returns the
// name in lower case without a trailing dot.
func ParseDomain(s string) (string, error) {
	name := strings.ToLower(strings.TrimSuffix(s, "."))
	switch {
	case name == "":
		return "", fmt.Errorf("%w: empty", ErrInvalidDomain)
	case len(name) > 253:
		return "", fmt.Errorf("%w %q: longer than 253 characters", ErrInvalidDomain, s)
	case strings.Contains(name, "://") || strings.ContainsAny(name, "/:@ "):
		return "", fmt.Errorf("%w %q: give a host name only, without scheme, port or path", ErrInvalidDomain, s)
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return "", fmt.Errorf("%w %q: needs at least two labels", ErrInvalidDomain, s)
	}
	for _, l := range labels {
		if !validLabel(l) {
			return "", fmt.Errorf("%w %q: label %q must be 1-63 letters, digits or hyphens, not starting or ending with a hyphen", ErrInvalidDomain, s, l)
		}
	}
	if _, err := strconv.Atoi(labels[len(labels)-1]); err == nil {
		return "", fmt.Errorf("%w %q: the top-level label is numeric (an IP address is not a domain)", ErrInvalidDomain, s)
	}
	return name, nil
}

// ValidateRegion checks region against the known AWS regions.
func ValidateRegion(region string) error {
	if _, ok := regionPartition(region); !ok {
		return fmt.Errorf("%w %q", ErrUnknownRegion, region)
	}
	return nil
}

// ValidateBus checks an event bus name or ARN; an ARN must be in region.
func ValidateBus(bus, region string) error {
	if !strings.HasPrefix(bus, "arn:") {
		if !validBusName(bus) {
			return fmt.Errorf("%w %q: a name is 1-256 letters, digits, dots, hyphens or underscores", ErrInvalidBus, bus)
		}
		return nil
	}
	parts := strings.SplitN(bus, ":", 6)
	if len(parts) != 6 || !strings.HasPrefix(parts[1], "aws") || parts[2] != "events" ||
		parts[3] == "" || len(parts[4]) != 12 || !allOf(parts[4], isDigit) {
		return fmt.Errorf("%w %q: an ARN must look like arn:aws:events:<region>:<account>:event-bus/<name>", ErrInvalidBus, bus)
	}
	name, ok := strings.CutPrefix(parts[5], "event-bus/")
	if !ok || !validBusName(name) {
		return fmt.Errorf("%w %q: an ARN must look like arn:aws:events:<region>:<account>:event-bus/<name>", ErrInvalidBus, bus)
	}
	if parts[3] != region {
		return fmt.Errorf("%w %q: the bus is in %s, the resolver in %s", ErrInvalidBus, bus, parts[3], region)
	}
	return nil
}

// ValidateAPIID checks an API Gateway API id: ten lower-case letters or digits.
func ValidateAPIID(id string) error {
	if len(id) != 10 || !allOf(id, func(r rune) bool { return isLower(r) || isDigit(r) }) {
		return fmt.Errorf("%w %q: must be 10 lower-case letters or digits", ErrInvalidAPIID, id)
	}
	return nil
}

// ValidateToken checks a short-link token: ten base62 characters.
func ValidateToken(token string) error {
	if len(token) != 10 || !allOf(token, isAlnum) {
		return fmt.Errorf("%w %q: must be 10 base62 characters", ErrInvalidToken, token)
	}
	return nil
}

// ValidatePrefix checks a short-link path prefix (one path segment).
func ValidatePrefix(prefix string) error {
	if len(prefix) < 1 || len(prefix) > 63 || prefix[0] == '-' ||
		!allOf(prefix, func(r rune) bool { return isLower(r) || isDigit(r) || r == '-' }) {
		return fmt.Errorf("%w %q: must be one path segment of 1-63 lower-case letters, digits or hyphens", ErrInvalidPrefix, prefix)
	}
	return nil
}

// ValidateServer checks a DNS server address host:port.
func ValidateServer(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return fmt.Errorf("%w %q: want host:port", ErrInvalidServer, addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%w %q: bad port", ErrInvalidServer, addr)
	}
	return nil
}

func validLabel(l string) bool {
	return len(l) >= 1 && len(l) <= 63 && l[0] != '-' && l[len(l)-1] != '-' &&
		allOf(l, func(r rune) bool { return isLower(r) || isDigit(r) || r == '-' })
}

func validBusName(name string) bool {
	return len(name) >= 1 && len(name) <= 256 &&
		allOf(name, func(r rune) bool { return isAlnum(r) || r == '.' || r == '-' || r == '_' })
}

func allOf(s string, ok func(rune) bool) bool {
	for _, r := range s {
		if !ok(r) {
			return false
		}
	}
	return true
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }
func isLower(r rune) bool { return r >= 'a' && r <= 'z' }
func isAlnum(r rune) bool { return isDigit(r) || isLower(r) || (r >= 'A' && r <= 'Z') }
