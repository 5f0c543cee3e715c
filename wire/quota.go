package wire

// md's admin API for directory quotas (signed POSTs, JSON). The quotas
// themselves are shoal.Quota.
const (
	PathAdminQuotaSet = "/.shoal/admin/quota/set" // QuotaSetRequest → shoal.Quota (as counted when set)
	PathAdminQuotaRm  = "/.shoal/admin/quota/rm"  // QuotaDirRequest → 204
	PathAdminQuotas   = "/.shoal/admin/quotas"    // {} → []shoal.Quota, by directory
)

// QuotaSetRequest puts a quota on a directory, or changes its limits.
// A limit left out (null) stays as it is (none on a new quota); 0 removes
// it; at least one limit must remain. Older clients that send both keep
// their meaning.
type QuotaSetRequest struct {
	Dir   string `json:"dir"`
	Bytes *int64 `json:"bytes,omitempty"`
	Files *int64 `json:"files,omitempty"`
}

// QuotaDirRequest names the directory whose quota goes.
type QuotaDirRequest struct {
	Dir string `json:"dir"`
}

// AbortRequest tells md that an upload failed on the data server or gw
// receiving it (body refused, cut or lost): md forgets its reservation at
// once, so what it held on quotas comes back without waiting for its
// expiry.
type AbortRequest struct {
	Upload string `json:"upload"`
}
