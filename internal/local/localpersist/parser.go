package localpersist

import (
	"fmt"
	"strconv"
	"strings"
)

// The grammar of the Gremlin-Groovy subset local Persist parses (EBNF). Which steps
// exist and what arguments they take is checked after parsing, by compile.
//
//	script    = "g" "." call { "." call } [ ";" ] EOF .
//	call      = IDENT "(" [ arg { "," arg } ] ")" .
//	arg       = STRING | INTEGER | "true" | "false" | anonymous | IDENT .
//	anonymous = "__" "." call { "." call }
//	          | call { "." call } .      (a bare step name, as Groovy's static import of __ allows,
//	                                      or a predicate of P, such as gte(x), as its static import allows)
//
// An IDENT argument that is not followed by "(" names a binding.

// maxNesting bounds how deeply anonymous traversals may nest, so that a hostile
// script cannot exhaust the stack.
const maxNesting = 32

// traversal is the syntax tree of a traversal: the root one (g.V()…, whose first call
// is the source step) or an anonymous one (__.outE('x').count()).
type traversal struct {
	pos   int
	anon  bool
	bare  bool // anonymous and written without "__.": a P predicate (gte(x), within(…)) or a step
	calls []*call
}

// call is one step invocation: name(args…).
type call struct {
	pos  int
	name string
	args []*arg
}

type argKind int

const (
	argString argKind = iota
	argInt
	argBool
	argBinding
	argTraversal
)

// arg is one argument of a call: a literal, a binding name or an anonymous traversal.
type arg struct {
	kind argKind
	pos  int
	str  string // argString: the value; argBinding: the variable name
	num  int64
	b    bool
	trav *traversal
}

// String writes the traversal back as a script that parses to the same tree.
func (t *traversal) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t *traversal) write(b *strings.Builder) {
	switch {
	case t.bare:
	case t.anon:
		b.WriteString("__")
	default:
		b.WriteString("g")
	}
	for i, c := range t.calls {
		if i > 0 || !t.bare {
			b.WriteByte('.')
		}
		b.WriteString(c.name)
		b.WriteByte('(')
		for i, a := range c.args {
			if i > 0 {
				b.WriteByte(',')
			}
			a.write(b)
		}
		b.WriteByte(')')
	}
}

func (a *arg) write(b *strings.Builder) {
	switch a.kind {
	case argString:
		b.WriteString(quoteGroovy(a.str))
	case argInt:
		b.WriteString(strconv.FormatInt(a.num, 10))
	case argBool:
		b.WriteString(strconv.FormatBool(a.b))
	case argBinding:
		b.WriteString(a.str)
	case argTraversal:
		a.trav.write(b)
	}
}

// quoteGroovy writes s as a single-quoted Groovy string literal.
func quoteGroovy(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\'':
			b.WriteString(`\'`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('\'')
	return b.String()
}

type parser struct {
	src  string
	toks []token
	i    int
}

// parse turns a script into its syntax tree. Every error is a *scriptError naming
// what was expected and where.
func parse(src string) (*traversal, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	root, err := p.root()
	if err != nil {
		return nil, err
	}
	if p.peek().kind == tokSemicolon {
		p.next()
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.errorf(t, "unexpected %s after the end of the traversal", t.describe())
	}
	return root, nil
}

func (p *parser) peek() token { return p.toks[p.i] }

// peekAt looks n tokens ahead, answering EOF past the end.
func (p *parser) peekAt(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) errorf(t token, format string, args ...any) error {
	return errAt(p.src, t.pos, format, args...)
}

func (p *parser) expect(kind tokenKind, context string) (token, error) {
	t := p.next()
	if t.kind != kind {
		return t, p.errorf(t, "expected %s %s, found %s", kind, context, t.describe())
	}
	return t, nil
}

func (p *parser) root() (*traversal, error) {
	t := p.next()
	if t.kind != tokIdent || t.text != "g" {
		return nil, p.errorf(t, "a script must start with the traversal source g, found %s", t.describe())
	}
	if _, err := p.expect(tokDot, "after g"); err != nil {
		return nil, err
	}
	calls, err := p.chain(0)
	if err != nil {
		return nil, err
	}
	return &traversal{pos: t.pos, calls: calls}, nil
}

// chain parses call { "." call }.
func (p *parser) chain(depth int) ([]*call, error) {
	var calls []*call
	for {
		c, err := p.call(depth)
		if err != nil {
			return nil, err
		}
		calls = append(calls, c)
		if p.peek().kind != tokDot {
			return calls, nil
		}
		p.next()
	}
}

func (p *parser) call(depth int) (*call, error) {
	name, err := p.expect(tokIdent, "(a step name)")
	if err != nil {
		return nil, err
	}
	if _, err := p.expect(tokLParen, "after "+name.text); err != nil {
		return nil, err
	}
	c := &call{pos: name.pos, name: name.text}
	if p.peek().kind == tokRParen {
		p.next()
		return c, nil
	}
	for {
		a, err := p.arg(depth)
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, a)
		t := p.next()
		switch t.kind {
		case tokComma:
			continue
		case tokRParen:
			return c, nil
		}
		return nil, p.errorf(t, "expected ',' or ')' in the arguments of %s(), found %s", c.name, t.describe())
	}
}

func (p *parser) arg(depth int) (*arg, error) {
	t := p.peek()
	switch t.kind {
	case tokString:
		p.next()
		return &arg{kind: argString, pos: t.pos, str: t.text}, nil
	case tokInt:
		p.next()
		return &arg{kind: argInt, pos: t.pos, num: t.num}, nil
	case tokIdent:
		switch {
		case t.text == "__" || p.peekAt(1).kind == tokLParen:
			return p.anonymous(depth + 1)
		case t.text == "true" || t.text == "false":
			p.next()
			return &arg{kind: argBool, pos: t.pos, b: t.text == "true"}, nil
		case t.text == "null":
			return nil, p.errorf(t, "null is not supported")
		case p.peekAt(1).kind == tokDot:
			return nil, p.errorf(t, "%s.… is not supported: arguments are string, integer or boolean literals, bindings or anonymous traversals", t.text)
		}
		p.next()
		return &arg{kind: argBinding, pos: t.pos, str: t.text}, nil
	}
	return nil, p.errorf(t, "expected an argument, found %s", t.describe())
}

func (p *parser) anonymous(depth int) (*arg, error) {
	t := p.peek()
	if depth > maxNesting {
		return nil, p.errorf(t, "anonymous traversals nested more than %d deep", maxNesting)
	}
	bare := t.text != "__"
	if !bare {
		p.next()
		if _, err := p.expect(tokDot, "after __"); err != nil {
			return nil, err
		}
	}
	calls, err := p.chain(depth)
	if err != nil {
		return nil, err
	}
	return &arg{kind: argTraversal, pos: t.pos, trav: &traversal{pos: t.pos, anon: true, bare: bare, calls: calls}}, nil
}
