package memory_test

import (
	"testing"

	"shoal"
	"shoal/cache/cachetest"
	"shoal/cache/memory"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	cachetest.Run(t, func(t *testing.T) shoal.Cache { return memory.New(0) })
}

func TestEvictsBeyondMaxItems(t *testing.T) {
	c := memory.New(10)
	for i := 0; i < 100; i++ {
		c.Set(t.Context(), string(rune('a'+i)), []byte("x"), 0)
	}
	m, _ := c.GetMulti(t.Context(), func() (ks []string) {
		for i := 0; i < 100; i++ {
			ks = append(ks, string(rune('a'+i)))
		}
		return
	}())
	if len(m) != 10 {
		t.Fatalf("holds %d keys, want 10", len(m))
	}
}
