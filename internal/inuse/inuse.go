// Package inuse tells whether another process has a file open for
// writing, and keeps new writers out while the file is moved or removed.
//
// A file that is still open for writing is not complete, however long it
// has been quiet: a writer that pauses longer than a watcher's quiet
// period and then goes on writes into the file wherever it was moved to.
// On Linux the kernel answers through a read lease (fcntl F_SETLEASE):
// one can be taken only while no process has the file open for writing,
// and while it is held an open for writing waits for its release. Where
// leases are not available (other systems, file systems such as NFS, a
// file another user owns) Hold says it cannot tell.
package inuse

import "errors"

// ErrBusy says another process has the file open for writing.
var ErrBusy = errors.New("still open for writing by another process")

// Hold keeps new writers out of the file at path until release is called
// (release is never nil). It returns ErrBusy when a process has the file
// open for writing now, and held false when the system cannot tell.
func Hold(path string) (release func(), held bool, err error) { return hold(path) }

// Busy reports whether a process has the file at path open for writing
// (false when the system cannot tell).
func Busy(path string) (bool, error) {
	release, _, err := hold(path)
	release()
	if errors.Is(err, ErrBusy) {
		return true, nil
	}
	return false, err
}
