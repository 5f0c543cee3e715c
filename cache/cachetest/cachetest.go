// Package cachetest is the conformance suite for shoal.Cache: every byte
// tier (cache/memory, cache/memcache) runs it from its own tests.
package cachetest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"shoal"
	"shoal/cache"
)

// Run runs the suite. newCache returns an empty cache (or one whose keys
// cannot collide with the suite's: every key here has a random prefix).
func Run(t *testing.T, newCache func(t *testing.T) shoal.Cache) {
	tests := []struct {
		name string
		fn   func(t *testing.T, c shoal.Cache, key func(string) string)
	}{
		{"GetMiss", testGetMiss},
		{"SetGet", testSetGet},
		{"Overwrite", testOverwrite},
		{"Delete", testDelete},
		{"DeleteMissing", testDeleteMissing},
		{"BinaryValues", testBinaryValues},
		{"LongKey", testLongKey},
		{"GetMulti", testGetMulti},
		{"SetMulti", testSetMulti},
		{"TTL", testTTL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCache(t)
			prefix := fmt.Sprintf("ct%x:", time.Now().UnixNano())
			tt.fn(t, c, func(s string) string { return prefix + s })
		})
	}
}

var ctx = context.Background()

func mustGet(t *testing.T, c shoal.Cache, key string, want []byte) {
	t.Helper()
	got, err := c.Get(ctx, key)
	if err != nil {
		t.Fatalf("Get(%.40q): %v", key, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Get(%.40q) = %q, want %q", key, got, want)
	}
}

func mustMiss(t *testing.T, c shoal.Cache, key string) {
	t.Helper()
	got, err := c.Get(ctx, key)
	if !shoal.IsKind(err, shoal.KindNotFound) {
		t.Fatalf("Get(%.40q) = %q, %v; want a KindNotFound error", key, got, err)
	}
}

func mustSet(t *testing.T, c shoal.Cache, key string, v []byte, ttl time.Duration) {
	t.Helper()
	if err := c.Set(ctx, key, v, ttl); err != nil {
		t.Fatalf("Set(%.40q): %v", key, err)
	}
}

func testGetMiss(t *testing.T, c shoal.Cache, key func(string) string) {
	mustMiss(t, c, key("never-set"))
}

func testSetGet(t *testing.T, c shoal.Cache, key func(string) string) {
	mustSet(t, c, key("a"), []byte("alpha"), 0)
	mustSet(t, c, key("b"), []byte("beta"), time.Minute)
	mustGet(t, c, key("a"), []byte("alpha"))
	mustGet(t, c, key("b"), []byte("beta"))
	mustSet(t, c, key("empty"), []byte{}, 0)
	mustGet(t, c, key("empty"), []byte{})
	// The cache keeps its own copy: changing the caller's slice after Set,
	// or the slice Get returned, changes nothing stored.
	v := []byte("mutable")
	mustSet(t, c, key("copy"), v, 0)
	v[0] = 'X'
	got, _ := c.Get(ctx, key("copy"))
	if len(got) > 0 {
		got[0] = 'Y'
	}
	mustGet(t, c, key("copy"), []byte("mutable"))
}

func testOverwrite(t *testing.T, c shoal.Cache, key func(string) string) {
	mustSet(t, c, key("k"), []byte("old value, longer"), 0)
	mustSet(t, c, key("k"), []byte("new"), 0)
	mustGet(t, c, key("k"), []byte("new"))
}

func testDelete(t *testing.T, c shoal.Cache, key func(string) string) {
	mustSet(t, c, key("gone"), []byte("x"), 0)
	mustSet(t, c, key("kept"), []byte("y"), 0)
	if err := c.Delete(ctx, key("gone")); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	mustMiss(t, c, key("gone"))
	mustGet(t, c, key("kept"), []byte("y"))
}

func testDeleteMissing(t *testing.T, c shoal.Cache, key func(string) string) {
	if err := c.Delete(ctx, key("never-set")); err != nil {
		t.Fatalf("Delete of a missing key: %v, want nil", err)
	}
}

func testBinaryValues(t *testing.T, c shoal.Cache, key func(string) string) {
	all := make([]byte, 0, 3*256)
	for i := 0; i < 256; i++ {
		all = append(all, byte(i))
	}
	all = append(all, "\r\nEND\r\n\x00"...) // protocol look-alikes inside a value
	for i := 255; i >= 0; i-- {
		all = append(all, byte(i))
	}
	mustSet(t, c, key("bin"), all, 0)
	mustGet(t, c, key("bin"), all)
	big := bytes.Repeat(all, 200) // ~100 KiB
	mustSet(t, c, key("big"), big, 0)
	mustGet(t, c, key("big"), big)
}

func testLongKey(t *testing.T, c shoal.Cache, key func(string) string) {
	k := key("")
	k += strings.Repeat("k", 250-len(k))
	if len(k) != 250 {
		t.Fatalf("test bug: key of %d bytes", len(k))
	}
	mustSet(t, c, k, []byte("long"), 0)
	mustGet(t, c, k, []byte("long"))
	// A key differing only in its last byte is another key.
	k2 := k[:249] + "j"
	mustMiss(t, c, k2)
	if err := c.Delete(ctx, k); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	mustMiss(t, c, k)
}

func testGetMulti(t *testing.T, c shoal.Cache, key func(string) string) {
	mg, ok := c.(cache.MultiGetter)
	if !ok {
		t.Skip("no GetMulti: the decorator falls back to Get")
	}
	var keys []string
	for i := 0; i < 20; i++ {
		keys = append(keys, key(fmt.Sprint("m", i)))
		if i%2 == 0 {
			mustSet(t, c, keys[i], []byte(fmt.Sprint("v", i)), 0)
		}
	}
	m, err := mg.GetMulti(ctx, keys)
	if err != nil {
		t.Fatalf("GetMulti: %v", err)
	}
	if len(m) != 10 {
		t.Errorf("GetMulti returned %d keys, want 10", len(m))
	}
	for i, k := range keys {
		v, ok := m[k]
		if want := fmt.Sprint("v", i); i%2 == 0 && (!ok || string(v) != want) {
			t.Errorf("GetMulti[%d] = %q, %v; want %q", i, v, ok, want)
		}
		if i%2 == 1 && ok {
			t.Errorf("GetMulti[%d] present, never set", i)
		}
	}
}

// testSetMulti: every tier has SetMulti (the invalidations use it); the
// values land as Set would put them, overwrites included, whichever
// server holds each key.
func testSetMulti(t *testing.T, c shoal.Cache, key func(string) string) {
	ms, ok := c.(cache.MultiSetter)
	if !ok {
		t.Fatalf("%T has no SetMulti (cache.MultiSetter)", c)
	}
	var keys []string
	var vals [][]byte
	for i := range 12 {
		keys = append(keys, key(fmt.Sprint("s", i)))
		vals = append(vals, []byte(fmt.Sprint("v", i)))
	}
	vals[10] = []byte("\r\nSTORED\r\nEND\r\n\x00") // protocol look-alikes
	vals[11] = []byte{}
	if err := ms.SetMulti(ctx, keys, vals, 0); err != nil {
		t.Fatalf("SetMulti: %v", err)
	}
	for i, k := range keys {
		mustGet(t, c, k, vals[i])
	}
	next := [][]byte{[]byte("w0, longer than before"), []byte("w1")}
	if err := ms.SetMulti(ctx, keys[:2], next, time.Minute); err != nil {
		t.Fatalf("SetMulti over stored keys: %v", err)
	}
	mustGet(t, c, keys[0], next[0])
	mustGet(t, c, keys[1], next[1])
	mustGet(t, c, keys[2], vals[2])
	if err := ms.SetMulti(ctx, keys[:3], next, 0); !shoal.IsKind(err, shoal.KindInvalid) {
		t.Fatalf("SetMulti of 3 keys with 2 values: %v, want KindInvalid", err)
	}
	mustGet(t, c, keys[2], vals[2])
}

// testTTL is the suite's one slow test, bounded: memcached counts TTLs in
// whole seconds, so a 2s item is gone between 1s and 2s after Set (or
// SetMulti).
func testTTL(t *testing.T, c shoal.Cache, key func(string) string) {
	ms := c.(cache.MultiSetter) // testSetMulti fails without it
	mustSet(t, c, key("short"), []byte("s"), 2*time.Second)
	mustSet(t, c, key("long"), []byte("l"), time.Hour)
	for _, kv := range []struct {
		k   string
		ttl time.Duration
	}{{"short2", 2 * time.Second}, {"long2", time.Hour}} {
		if err := ms.SetMulti(ctx, []string{key(kv.k)}, [][]byte{[]byte(kv.k)}, kv.ttl); err != nil {
			t.Fatalf("SetMulti: %v", err)
		}
	}
	mustGet(t, c, key("short"), []byte("s"))
	mustGet(t, c, key("short2"), []byte("short2"))
	deadline := time.Now().Add(10 * time.Second)
	for _, k := range []string{key("short"), key("short2")} {
		for {
			_, err := c.Get(ctx, k)
			if shoal.IsKind(err, shoal.KindNotFound) {
				break
			}
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s, with a 2s TTL, still present after 10s", k)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	mustGet(t, c, key("long"), []byte("l"))
	mustGet(t, c, key("long2"), []byte("long2"))
}
