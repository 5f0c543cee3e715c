package shoal

import (
	"context"
	"time"
)

// Cache is a byte-valued key/value tier shared by md replicas, such as
// memcached. Keys are at most 250 bytes of printable ASCII without spaces.
// A cache may lose anything at any time; callers treat every error as a miss.
type Cache interface {
	// Get returns the value of key, or an error of KindNotFound on a miss.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores value under key for at most ttl (0: the tier's default).
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}
