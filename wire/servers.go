package wire

// md's admin API for a server's state (signed POST, JSON). Drain is the
// way out of active (see PathAdminDrain); this is the way back.
const (
	PathAdminServerActivate = "/.shoal/admin/server/activate" // ServerRequest → shoal.Server (active)
)

// ServerRequest names a data server.
type ServerRequest struct {
	Server string `json:"server"`
}
