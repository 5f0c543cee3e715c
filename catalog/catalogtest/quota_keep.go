package catalogtest

import (
	"sync"
	"testing"

	"shoal"
)

// testQuotaKeepLimits: SetQuota changes only the limits it is given
// (shoal.QuotaKeep leaves one as it is, 0 removes it), refuses to leave a
// quota without any limit, and two callers each changing one limit at
// the same time keep both changes: the merge is in the transaction.
func testQuotaKeepLimits(t *testing.T, c shoal.Catalog) {
	mkdir(t, c, "/k")
	putInline(t, c, "/k/f", "12345")
	want := func(what string, bytes, files int64) {
		t.Helper()
		if q := quotaOf(t, c, "/k"); q.Bytes != bytes || q.Files != files || q.UsedBytes != 5 || q.UsedFiles != 1 {
			t.Errorf("%s: quota = %+v, want limits %d bytes, %d entries, counting 5 bytes, 1 entry", what, q, bytes, files)
		}
	}
	q := got(c.SetQuota(ctx(t), "/k", shoal.QuotaKeep, 100)).must(t)
	if q.Bytes != 0 || q.Files != 100 {
		t.Errorf("new quota with the byte limit kept = %+v, want none and 100 entries", q)
	}
	got(c.SetQuota(ctx(t), "/k", 10<<20, shoal.QuotaKeep)).must(t)
	want("byte limit set, entry limit kept", 10<<20, 100)
	q = got(c.SetQuota(ctx(t), "/k", shoal.QuotaKeep, 200)).must(t)
	if q.Bytes != 10<<20 || q.Files != 200 {
		t.Errorf("SetQuota's answer after changing the entry limit alone = %+v", q)
	}
	want("entry limit changed, byte limit kept", 10<<20, 200)
	got(c.SetQuota(ctx(t), "/k", 0, shoal.QuotaKeep)).must(t)
	want("byte limit removed", 0, 200)
	_, err := c.SetQuota(ctx(t), "/k", shoal.QuotaKeep, 0)
	wantKind(t, "removing the last limit", err, shoal.KindInvalid)
	want("after removing the last limit was refused", 0, 200)
	got(c.SetQuota(ctx(t), "/k", shoal.QuotaKeep, shoal.QuotaKeep)).must(t)
	want("both kept: a recount", 0, 200)
	mkdir(t, c, "/k2")
	_, err = c.SetQuota(ctx(t), "/k2", shoal.QuotaKeep, shoal.QuotaKeep)
	wantKind(t, "a new quota without limits", err, shoal.KindInvalid)
	_, err = c.SetQuota(ctx(t), "/k", -5, shoal.QuotaKeep)
	wantKind(t, "a negative limit", err, shoal.KindInvalid)

	// Racing changes of one limit each: every round's two limits survive.
	for round := int64(1); round <= 8; round++ {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Add(2)
		go func() { defer wg.Done(); _, errs[0] = c.SetQuota(ctx(t), "/k", round<<20, shoal.QuotaKeep) }()
		go func() { defer wg.Done(); _, errs[1] = c.SetQuota(ctx(t), "/k", shoal.QuotaKeep, round*1000) }()
		wg.Wait()
		for _, err := range errs {
			ok(t, err)
		}
		want("after two racing changes", round<<20, round*1000)
	}
}
