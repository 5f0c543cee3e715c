package md

// SetProxyWindow lowers the most md relays of a file in one answer from
// a data server (proxyWindow), for tests (md_test's too); it
// returns what puts it back.
func SetProxyWindow(n int64) (restore func()) {
	old := proxyWindow
	proxyWindow = n
	return func() { proxyWindow = old }
}
