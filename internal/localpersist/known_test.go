package localpersist

import (
	"fmt"
	"testing"
)

func TestKnownVerticesKeepOnlyWhatCommitted(t *testing.T) {
	k := newKnownVertices()
	k.add("a", "short_url")
	if l, ok := k.label("a"); !ok || l != "short_url" {
		t.Fatalf("the open transaction's own vertex: %q %v", l, ok)
	}
	k.rollback()
	if _, ok := k.label("a"); ok {
		t.Fatal("a vertex of a rolled back transaction is still known")
	}
	k.add("b", "short_url")
	k.commit()
	k.rollback() // a later transaction rolled back
	if _, ok := k.label("b"); !ok {
		t.Fatal("a committed vertex was forgotten by a later rollback")
	}
	for i := range knownVerticesLimit + 1 {
		k.add(fmt.Sprint(i), "short_url")
	}
	k.commit()
	if len(k.committed) > knownVerticesLimit+1 || len(k.pending) != 0 {
		t.Fatalf("committed %d, pending %d after overflowing the limit", len(k.committed), len(k.pending))
	}
}
