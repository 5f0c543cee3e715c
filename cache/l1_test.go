package cache

import (
	"fmt"
	"testing"
	"time"

	"shoal"
)

func TestL1HitAllocatesNothing(t *testing.T) {
	c := newL1[*shoal.Entry](100*l1Shards, time.Hour, time.Hour)
	e := &shoal.Entry{Path: "/a/b"}
	neg := shoal.E("catalog.Stat", "/missing", shoal.KindNotFound)
	c.put("/a/b", c.token("/a/b"), e, nil)
	c.put("/missing", c.token("/missing"), nil, neg)
	path := string([]byte("/a/b")) // not the same string header as the key
	allocs := testing.AllocsPerRun(1000, func() {
		if got, _, ok := c.get(path); !ok || got != e {
			t.Fatal("miss")
		}
		if _, err, ok := c.get("/missing"); !ok || err != neg {
			t.Fatal("negative miss")
		}
	})
	if allocs != 0 {
		t.Errorf("L1 hit: %v allocations, want 0", allocs)
	}
}

func TestL1SizeBound(t *testing.T) {
	const size = 10 * l1Shards
	c := newL1[*shoal.Entry](size, time.Hour, time.Hour)
	for i := 0; i < 10*size; i++ {
		p := fmt.Sprint("/f", i)
		c.put(p, c.token(p), &shoal.Entry{Path: p}, nil)
	}
	n, hits := 0, 0
	for i := range c.shards {
		n += len(c.shards[i].slots)
	}
	for i := 0; i < 10*size; i++ {
		if _, _, ok := c.get(fmt.Sprint("/f", i)); ok {
			hits++
		}
	}
	if n > size || hits != n || n < size/2 {
		t.Errorf("holds %d entries (%d found), want at most %d and most of them", n, hits, size)
	}
}

func TestL1Expiry(t *testing.T) {
	c := newL1[*shoal.Entry](100, time.Nanosecond, time.Nanosecond)
	c.put("/x", c.token("/x"), &shoal.Entry{Path: "/x"}, nil)
	time.Sleep(time.Millisecond)
	if _, _, ok := c.get("/x"); ok {
		t.Error("expired entry served")
	}
}

// A fill that read the catalog before a mutation and lands after it is
// dropped; so are older slots after an epoch bump.
func TestL1Invalidation(t *testing.T) {
	c := newL1[*shoal.Entry](100*l1Shards, time.Hour, time.Hour)
	tok := c.token("/f")
	c.forget("/f") // a mutation while the filler was reading the catalog
	c.put("/f", tok, &shoal.Entry{Path: "/f"}, nil)
	if _, _, ok := c.get("/f"); ok {
		t.Error("fill older than a mutation was stored")
	}

	c.put("/d/x", c.token("/d/x"), &shoal.Entry{Path: "/d/x"}, nil)
	c.put("/neg", c.token("/neg"), nil, shoal.E("s", shoal.KindNotFound))
	c.negEpoch.Add(1)
	if _, _, ok := c.get("/neg"); ok {
		t.Error("negative slot survived a creation")
	}
	if _, _, ok := c.get("/d/x"); !ok {
		t.Error("positive slot dropped by a creation")
	}
	c.epoch.Add(1)
	if _, _, ok := c.get("/d/x"); ok {
		t.Error("slot survived a subtree mutation")
	}
}
