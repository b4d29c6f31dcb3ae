package clickfact

import "time"

// appendTime appends t in UTC as 2006-01-02T15:04:05Z, or with millis as
// 2006-01-02T15:04:05.000Z, what time.Time.AppendFormat writes for those layouts at a
// fraction of its cost: it runs twice on every redirect. Years outside 0000–9999 take
// AppendFormat.
func appendTime(b []byte, t time.Time, millis bool) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		if millis {
			return t.AppendFormat(b, timeLayout)
		}
		return t.AppendFormat(b, time.RFC3339)
	}
	h, mi, s := t.Clock()
	b = append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-')
	b = append2(b, int(mo), '-')
	b = append2(b, d, 'T')
	b = append2(b, h, ':')
	b = append2(b, mi, ':')
	if !millis {
		return append2(b, s, 'Z')
	}
	b = append2(b, s, '.')
	ms := t.Nanosecond() / 1e6
	return append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

// append2 appends n (0–99) as two digits and then sep.
func append2(b []byte, n int, sep byte) []byte {
	return append(b, byte('0'+n/10), byte('0'+n%10), sep)
}
