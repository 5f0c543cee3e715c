package main

import (
	"log/slog"

	"shoal"
	"shoal/cache"
	"shoal/cache/memcache"
	"shoal/cmd/shoal/config"
)

// withCache puts the configured tiers in front of db: memcached (L2) when
// cache.memcached lists servers, the in-process tier (L1) when cache.l1 is
// on, or auto without memcached; with sole, the absence of locks is known
// in process. Closing the result closes db and the
// memcached client.
func withCache(db shoal.Catalog, c *config.Config, sole bool, log *slog.Logger) (shoal.Catalog, error) {
	l1 := c.Cache.L1 == "on" || (c.Cache.L1 == "auto" && len(c.Cache.Memcached) == 0)
	opts := cache.Options{
		L1:          l1,
		L1Size:      c.Cache.L1Entries,
		L1TTL:       c.Cache.L1TTL,
		L2TTL:       c.Cache.TTL,
		NegativeTTL: c.Cache.NegativeTTL,
		KeyPrefix:   c.Cache.KeyPrefix,
		SoleMD:      sole,
	}
	var mc *memcache.Cache
	if len(c.Cache.Memcached) > 0 {
		var err error
		mc, err = memcache.New(memcache.Options{Servers: c.Cache.Memcached, Timeout: c.Cache.Timeout})
		if err != nil {
			return nil, err
		}
		opts.L2 = mc
	}
	log.Info("catalog cache", "l1", l1, "l1_ttl", c.Cache.L1TTL, "memcached", c.Cache.Memcached, "sole_md", sole)
	return &cachedCatalog{Catalog: cache.NewCatalog(db, opts), mc: mc}, nil
}

// cachedCatalog closes the memcached client along with the catalog.
type cachedCatalog struct {
	*cache.Catalog
	mc *memcache.Cache
}

func (c *cachedCatalog) Close() error {
	err := c.Catalog.Close()
	if c.mc != nil {
		if cerr := c.mc.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
