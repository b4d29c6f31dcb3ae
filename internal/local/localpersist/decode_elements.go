package localpersist

import (
	"github.com/linoone/linoone/internal/core/graphson"
	"github.com/linoone/linoone/internal/foundation/yield"
)

// fastDocument is decodeDocument's fast path: {"vertices":[…],"edges":[…]}. It
// yields at pace between elements.
func fastDocument(body []byte, pace *yield.Point) (graphson.Document, bool) {
	p := scanner{s: string(body)} // one copy; every decoded string is a substring
	var doc graphson.Document
	var seen uint8
	ok := p.object(func(k string) bool {
		switch {
		case k == "vertices" && once(&seen, 1):
			return p.array(func() bool {
				pace.Maybe()
				v, ok := p.vertex()
				doc.Vertices = append(doc.Vertices, v)
				return ok
			})
		case k == "edges" && once(&seen, 2):
			doc.Edges = make([]graphson.Edge, 0, len(body)/600)
			return p.array(func() bool {
				pace.Maybe()
				e, ok := p.edge()
				doc.Edges = append(doc.Edges, e)
				return ok
			})
		}
		return false
	})
	if !ok || seen != 3 || !p.end() {
		return graphson.Document{}, false
	}
	return doc, true
}

// typed reads {"@type": want, "@value": …}, the value by value.
func (p *scanner) typed(want string, value func() bool) bool {
	var seen uint8
	ok := p.object(func(k string) bool {
		switch {
		case k == "@type" && once(&seen, 1):
			typ, ok := p.str()
			return ok && typ == want
		case k == "@value" && once(&seen, 2):
			return value()
		}
		return false
	})
	return ok && seen == 3
}

// strings reads an object's string members into the fields named by dst, each once;
// other members go to rest, which returns false for members it does not know.
func (p *scanner) strings(dst map[string]*string, rest func(k string) bool) bool {
	done := 0
	ok := p.object(func(k string) bool {
		f, ok := dst[k]
		if !ok {
			return rest(k)
		}
		if f == nil {
			return false // a repeated member
		}
		*f, ok = p.str()
		dst[k] = nil
		done++
		return ok
	})
	return ok && done == len(dst)
}

func (p *scanner) vertex() (graphson.Vertex, bool) {
	var v graphson.Vertex
	type prop struct{ id, label string }
	var seen []prop
	ok := p.typed("g:Vertex", func() bool {
		return p.strings(map[string]*string{"id": &v.ID, "label": &v.Label}, func(k string) bool {
			if k != "properties" || v.Properties != nil {
				return false
			}
			v.Properties = graphson.Properties{}
			return p.object(func(key string) bool {
				if _, dup := v.Properties[key]; dup {
					return false
				}
				var pr prop
				n := 0
				ok := p.array(func() bool {
					n++
					return n == 1 && p.typed("g:VertexProperty", func() bool {
						return p.strings(map[string]*string{"id": &pr.id, "label": &pr.label}, func(k string) bool {
							if k != "value" || v.Properties[key] != nil {
								return false
							}
							val, ok := p.value()
							v.Properties[key] = val
							return ok
						})
					})
				})
				seen = append(seen, pr)
				return ok && n == 1 && pr.label == key && v.Properties[key] != nil
			})
		})
	})
	if !ok || v.Properties == nil {
		return graphson.Vertex{}, false
	}
	for _, pr := range seen { // ids derive from the vertex id, wherever it came
		if pr.id != v.ID+"/"+pr.label {
			return graphson.Vertex{}, false
		}
	}
	return v, true
}

// edge reads a g:Edge. It is the hot path of click ingest, so its members are
// matched by a switch rather than through strings.
func (p *scanner) edge() (graphson.Edge, bool) {
	var e graphson.Edge
	var seen uint8
	ok := p.typed("g:Edge", func() bool {
		return p.object(func(k string) bool {
			var dst *string
			switch {
			case k == "id" && once(&seen, 1):
				dst = &e.ID
			case k == "label" && once(&seen, 2):
				dst = &e.Label
			case k == "inV" && once(&seen, 4):
				dst = &e.InV
			case k == "inVLabel" && once(&seen, 8):
				dst = &e.InVLabel
			case k == "outV" && once(&seen, 16):
				dst = &e.OutV
			case k == "outVLabel" && once(&seen, 32):
				dst = &e.OutVLabel
			case k == "properties" && once(&seen, 64):
				e.Properties = make(graphson.Properties, 4)
				return p.object(func(key string) bool { return p.edgeProperty(key, e.Properties) })
			default:
				return false
			}
			var ok bool
			*dst, ok = p.str()
			return ok
		})
	})
	return e, ok && seen == 127
}

// edgeProperty reads {"@type":"g:Property","@value":{"key":key,"value":…}} into props.
func (p *scanner) edgeProperty(key string, props graphson.Properties) bool {
	if _, dup := props[key]; dup {
		return false
	}
	var seen uint8
	return p.typed("g:Property", func() bool {
		ok := p.object(func(k string) bool {
			switch {
			case k == "key" && once(&seen, 1):
				got, ok := p.str()
				return ok && got == key
			case k == "value" && once(&seen, 2):
				v, ok := p.value()
				props[key] = v
				return ok
			}
			return false
		})
		return ok && seen == 3
	})
}
