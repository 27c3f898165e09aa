package embedded

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

const (
	// socketDirName is the private directory, inside etcd's data dir, that
	// holds the client socket.
	socketDirName = "sock"
	// socketName is the client socket's file name.
	socketName = "client.sock"
	// maxSocketPath is the longest unix socket path used. The kernel's
	// limit is 107 bytes on Linux (sun_path holds 108 with the NUL) and 103
	// on the BSDs; a longer data-dir path makes the socket move to a
	// private temporary directory.
	maxSocketPath = 100
	// tempSocketDirPattern names the temporary socket directories.
	tempSocketDirPattern = "kapi-etcd-"
)

// sockets is where the embedded etcd's client socket lives: a directory
// only the owner can enter (mode 0700, owned by this process's user), so
// no other local user can connect to it, whatever the socket file's own
// mode.
type sockets struct {
	dir    string
	client string
	// temporary is set when dir was created for this server (the data
	// dir's path was too long for a socket); Close removes it.
	temporary bool
}

// newSockets chooses the socket directory for etcd's data dir: dataDir/sock
// when the socket path fits the kernel's limit, else a fresh 0700
// directory under $XDG_RUNTIME_DIR (a per-user directory by the XDG spec),
// the temporary directory, or /tmp, the first whose path fits.
func newSockets(dataDir string) (*sockets, error) {
	dir := filepath.Join(dataDir, socketDirName)
	if len(filepath.Join(dir, socketName)) <= maxSocketPath {
		if err := privateDir(dir); err != nil {
			return nil, err
		}
		return &sockets{dir: dir, client: filepath.Join(dir, socketName)}, nil
	}
	var bases []string
	if rd := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rd) {
		bases = append(bases, rd)
	}
	bases = append(bases, os.TempDir(), "/tmp")
	var errs []error
	for _, base := range bases {
		// MkdirTemp's random suffix is 10 digits at most.
		if len(filepath.Join(base, tempSocketDirPattern+"0123456789", socketName)) > maxSocketPath {
			continue
		}
		// MkdirTemp creates the directory with mode 0700, atomically,
		// under a name nobody else can have chosen.
		dir, err := os.MkdirTemp(base, tempSocketDirPattern)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := privateDir(dir); err != nil {
			_ = os.RemoveAll(dir)
			errs = append(errs, err)
			continue
		}
		return &sockets{dir: dir, client: filepath.Join(dir, socketName), temporary: true}, nil
	}
	return nil, fmt.Errorf("embedded etcd: no directory for the client socket: %s is too long for a unix socket and no temporary directory fits: %w",
		filepath.Join(dir, socketName), errors.Join(errs...))
}

// privateDir makes sure dir is a directory (not a symbolic link) owned by
// this process's user with mode 0700, creating it if needed and narrowing
// its mode if it is wider.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("embedded etcd: create socket directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("embedded etcd: socket directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("embedded etcd: socket directory %s is not a directory (%s)", dir, fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("embedded etcd: socket directory %s belongs to uid %d, not to this user (uid %d)", dir, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("embedded etcd: make socket directory private: %w", err)
		}
	}
	return nil
}

// remove removes a temporary socket directory (the socket itself is
// removed by etcd when its listener closes).
func (s *sockets) remove() error {
	if !s.temporary {
		return nil
	}
	if err := os.RemoveAll(s.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove socket directory: %w", err)
	}
	return nil
}
