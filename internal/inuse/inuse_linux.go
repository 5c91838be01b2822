package inuse

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

func hold(path string) (func(), bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return func() {}, false, err
	}
	// A lease break (a writer opening the file while it is held) is
	// signalled with SIGIO, which the Go runtime ignores unless asked: the
	// writer waits until release.
	_, err = unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_RDLCK)
	switch {
	case err == nil:
		return func() {
			unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_UNLCK)
			f.Close()
		}, true, nil
	case errors.Is(err, unix.EAGAIN):
		f.Close()
		return func() {}, false, fmt.Errorf("%s: %w", path, ErrBusy)
	default:
		// No leases here (another owner, NFS, FUSE): cannot tell.
		f.Close()
		return func() {}, false, nil
	}
}
