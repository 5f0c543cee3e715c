// Package sqlitewal registers an SQLite VFS that writes a connection's
// write-ahead log in one system call per commit instead of two per page.
//
// SQLite appends a commit to its log one frame at a time, a 24-byte
// header and then the page, each its own pwrite(2): a commit of 20 pages
// is 40 system calls before its fsync. On a VM, where a system call is
// dear, those writes were half of the catalog writer's CPU under small
// creates. This VFS is the host's own ("unix"), except that the writes to
// a log file are gathered in memory while they follow one another in the
// file and reach the file in one pwrite before anything else is done to
// it: a sync, a read, a truncation, a size query, a file control, a
// close, or a write elsewhere in the file.
//
// Why that is safe: SQLite publishes a commit to other connections (in
// the shared-memory index) only after it synced the log when synchronous
// is FULL, which is the only setting the catalog's writer runs with, and
// the sync writes the gathered frames first. Frames written before a
// commit (a large transaction spilling its cache) are read back only
// through the same file, whose reads write them first. A crash loses
// only what was never synced, which SQLite never reported committed.
// Errors of the delayed write are returned by the call that wrote it
// (the sync, for a commit), so the commit fails as it would have.
package sqlitewal

import (
	"fmt"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Name is the VFS's name, for a DSN's vfs parameter.
const Name = "shoal-wal"

// maxGather bounds the bytes gathered for one file and the bytes of one
// host write, which takes at most 128 KiB - 1 in one call (it masks
// larger lengths). A longer run of writes (a large commit, a spill) goes
// out in pieces.
const maxGather = 1<<17 - 1

var (
	registerOnce sync.Once
	registerErr  error

	hostVFS uintptr // the host's VFS, whose methods do the work
	ourVFS  sqlite3.Tsqlite3_vfs
	ourName = [...]byte{'s', 'h', 'o', 'a', 'l', '-', 'w', 'a', 'l', 0}

	// walMethods are the host's methods for a log file with ours in
	// front of the ones that touch its bytes; hostMethods are the host's.
	methodsOnce sync.Once
	hostMethods uintptr
	walMethods  sqlite3.Tsqlite3_io_methods

	mu    sync.Mutex
	files = map[uintptr]*logFile{}
)

// logFile is one open log file's gathered writes: buf belongs at off.
type logFile struct {
	buf []byte
	off int64
}

// Register registers the VFS once; later calls return the first's result.
func Register() error {
	registerOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		hostVFS = sqlite3.Xsqlite3_vfs_find(tls, 0)
		if hostVFS == 0 {
			registerErr = fmt.Errorf("sqlitewal: SQLite has no default VFS")
			return
		}
		ourVFS = *(*sqlite3.Tsqlite3_vfs)(ptr(hostVFS))
		ourVFS.FpNext = 0
		ourVFS.FzName = uintptr(unsafe.Pointer(&ourName[0]))
		ourVFS.FxOpen = funcPtr(open)
		if rc := sqlite3.Xsqlite3_vfs_register(tls, uintptr(unsafe.Pointer(&ourVFS)), 0); rc != sqlite3.SQLITE_OK {
			registerErr = fmt.Errorf("sqlitewal: registering the VFS: SQLite error %d", rc)
		}
	})
	return registerErr
}

// open opens the file with the host's VFS and, for a log file, puts
// walMethods in front of the host's.
func open(tls *libc.TLS, pVfs uintptr, zName uintptr, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	hv := (*sqlite3.Tsqlite3_vfs)(ptr(hostVFS))
	rc := (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&hv.FxOpen)))(tls, hostVFS, zName, pFile, flags, pOutFlags)
	if rc != sqlite3.SQLITE_OK || flags&sqlite3.SQLITE_OPEN_WAL == 0 {
		return rc
	}
	file := (*sqlite3.Tsqlite3_file)(ptr(pFile))
	methodsOnce.Do(func() {
		hostMethods = file.FpMethods
		walMethods = *(*sqlite3.Tsqlite3_io_methods)(ptr(hostMethods))
		walMethods.FxWrite = funcPtr(write)
		walMethods.FxRead = funcPtr(read)
		walMethods.FxSync = funcPtr(syncFile)
		walMethods.FxTruncate = funcPtr(truncate)
		walMethods.FxFileSize = funcPtr(fileSize)
		walMethods.FxFileControl = funcPtr(fileControl)
		walMethods.FxClose = funcPtr(closeFile)
	})
	if file.FpMethods != hostMethods {
		return rc // methods this VFS did not wrap: left as they are
	}
	mu.Lock()
	files[pFile] = &logFile{}
	mu.Unlock()
	file.FpMethods = uintptr(unsafe.Pointer(&walMethods))
	return rc
}

func host() *sqlite3.Tsqlite3_io_methods {
	return (*sqlite3.Tsqlite3_io_methods)(ptr(hostMethods))
}

func fileOf(pFile uintptr) *logFile {
	mu.Lock()
	f := files[pFile]
	mu.Unlock()
	return f
}

// flush writes the gathered bytes with the host's write: in one call,
// unless a single write of SQLite's was larger than maxGather (no page
// is), in pieces.
func flush(tls *libc.TLS, pFile uintptr, f *logFile) int32 {
	defer func() { f.buf = f.buf[:0] }()
	for done := 0; done < len(f.buf); {
		n := min(len(f.buf)-done, maxGather)
		if rc := writeThrough(tls, pFile, uintptr(unsafe.Pointer(&f.buf[done])), int32(n), f.off+int64(done)); rc != sqlite3.SQLITE_OK {
			return rc
		}
		done += n
	}
	return sqlite3.SQLITE_OK
}

// writeThrough is the host's write; a variable so that the tests can
// count the writes and fail one.
var writeThrough = hostWrite

func hostWrite(tls *libc.TLS, pFile, zBuf uintptr, n int32, off int64) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&host().FxWrite)))(tls, pFile, zBuf, n, off)
}

func write(tls *libc.TLS, pFile uintptr, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	f := fileOf(pFile)
	if len(f.buf) > 0 && (iOfst != f.off+int64(len(f.buf)) || len(f.buf)+int(iAmt) > maxGather) {
		if rc := flush(tls, pFile, f); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	if len(f.buf) == 0 {
		f.off = iOfst
	}
	f.buf = append(f.buf, unsafe.Slice((*byte)(ptr(zBuf)), iAmt)...)
	return sqlite3.SQLITE_OK
}

func read(tls *libc.TLS, pFile uintptr, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	if rc := flush(tls, pFile, fileOf(pFile)); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&host().FxRead)))(tls, pFile, zBuf, iAmt, iOfst)
}

func syncFile(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	if rc := flush(tls, pFile, fileOf(pFile)); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&host().FxSync)))(tls, pFile, flags)
}

func truncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	if rc := flush(tls, pFile, fileOf(pFile)); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return (*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&host().FxTruncate)))(tls, pFile, size)
}

func fileSize(tls *libc.TLS, pFile uintptr, pSize uintptr) int32 {
	if rc := flush(tls, pFile, fileOf(pFile)); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return (*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&host().FxFileSize)))(tls, pFile, pSize)
}

func fileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	if rc := flush(tls, pFile, fileOf(pFile)); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return (*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&host().FxFileControl)))(tls, pFile, op, pArg)
}

func closeFile(tls *libc.TLS, pFile uintptr) int32 {
	rc := flush(tls, pFile, fileOf(pFile))
	mu.Lock()
	delete(files, pFile)
	mu.Unlock()
	if crc := (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&host().FxClose)))(tls, pFile); rc == sqlite3.SQLITE_OK {
		rc = crc
	}
	return rc
}

// funcPtr is a Go function as the transpiled SQLite stores a C function
// pointer: the data word of an interface holding it.
func funcPtr(f any) uintptr {
	return (*[2]uintptr)(unsafe.Pointer(&f))[1]
}

// ptr turns an address SQLite handed over into a pointer (a conversion
// go vet accepts: SQLite's memory is not Go's, and never moves).
func ptr(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
