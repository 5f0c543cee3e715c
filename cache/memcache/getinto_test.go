package memcache_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"shoal/cache/memcache"

	"shoal"
	"shoal/internal/testsvc"
)

// GetInto finds what Set stored, over one and over three servers (so the
// key spreading of both paths must agree), with missing keys nil, empty
// values empty, and values that look like protocol lines intact.
func TestGetInto(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprint(n, "servers"), func(t *testing.T) {
			var addrs []string
			for range n {
				addrs = append(addrs, testsvc.Memcached(t))
			}
			c := newCache(t, addrs...)
			ctx := context.Background()
			var keys []string
			want := map[string][]byte{}
			for i := range 40 {
				k := fmt.Sprintf("key-%d", i)
				keys = append(keys, k)
				var v []byte
				switch i % 4 {
				case 0:
					continue // missing
				case 1:
					v = []byte{}
				case 2:
					v = []byte("x\r\nEND\r\nVALUE key-3 0 1\r\n")
				case 3:
					v = bytes.Repeat([]byte{byte(i)}, 5000+i)
				}
				if err := c.Set(ctx, k, v, 0); err != nil {
					t.Fatal(err)
				}
				want[k] = v
			}
			for _, sub := range [][]string{keys, keys[:1], keys[1:2], keys[3:9]} {
				vals := make([][]byte, len(sub))
				if err := c.GetInto(ctx, sub, vals); err != nil {
					t.Fatal(err)
				}
				for i, k := range sub {
					w, ok := want[k]
					switch {
					case !ok && vals[i] != nil:
						t.Errorf("%s: got %q, want missing (nil)", k, vals[i])
					case ok && (vals[i] == nil || !bytes.Equal(vals[i], w)):
						t.Errorf("%s: got %d bytes (nil %v), want %d", k, len(vals[i]), vals[i] == nil, len(w))
					}
				}
			}
		})
	}
}

// A dead server is KindUnavailable; once it is back (empty), GetInto
// reconnects and works.
func TestGetIntoServerRestart(t *testing.T) {
	p := testsvc.StartMemcached(t)
	c := newCache(t, p.Addr)
	ctx := context.Background()
	vals := make([][]byte, 1)
	c.Set(ctx, "k", []byte("v"), 0)
	if err := c.GetInto(ctx, []string{"k"}, vals); err != nil || string(vals[0]) != "v" {
		t.Fatalf("GetInto = %q, %v", vals[0], err)
	}
	p.Kill()
	if err := c.GetInto(ctx, []string{"k"}, vals); !shoal.IsKind(err, shoal.KindUnavailable) {
		t.Errorf("GetInto with memcached killed = %v, want KindUnavailable", err)
	}
	p.Restart()
	var err error
	for range 50 { // the breaker may skip reads for its backoff (1 s)
		if err = c.GetInto(ctx, []string{"k"}, vals); err == nil {
			break
		}
		waitABit()
	}
	if err != nil || vals[0] != nil {
		t.Errorf("GetInto after restart = %q, %v; want a miss", vals[0], err)
	}
	if err := c.GetInto(ctx, []string{"bad key"}, vals); !shoal.IsKind(err, shoal.KindInvalid) {
		t.Errorf("GetInto of a key with a space = %v, want KindInvalid", err)
	}
}

// BenchmarkGetInto4 is BenchmarkGetMulti4 through GetInto.
func BenchmarkGetInto4(b *testing.B) {
	c, err := memcacheNew(b)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	keys := []string{"a", "b", "c", "d"}
	for _, k := range keys {
		c.Set(ctx, k, make([]byte, 100), 0)
	}
	vals := make([][]byte, 4)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.GetInto(ctx, keys, vals); err != nil || vals[3] == nil {
			b.Fatal(err)
		}
	}
}

func waitABit() { time.Sleep(50 * time.Millisecond) }

func memcacheNew(b *testing.B) (*memcache.Cache, error) {
	return memcache.New(memcache.Options{Servers: []string{testsvc.Memcached(b)}})
}
