package md

// SetProxyWindow lowers the most md relays of a file in one answer from
// a data server (proxyWindow), for the tests of package md_test; it
// returns what puts it back.
func SetProxyWindow(n int64) (restore func()) {
	old := proxyWindow
	proxyWindow = n
	return func() { proxyWindow = old }
}
