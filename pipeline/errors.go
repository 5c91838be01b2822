package pipeline

import "errors"

// SetupError is an error met before any input was read (the inputs cannot
// be listed, the output directory cannot be used): nothing was converted.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

// setup marks err, if any, as a SetupError.
func setup(err error) error {
	if err == nil {
		return nil
	}
	return &SetupError{err}
}

// ErrPartial is returned (joined with each file's error) when KeepGoing let
// some inputs fail.
var ErrPartial = errors.New("some inputs failed")

// ErrNotDisposed is returned (joined with each input's error) when inputs
// were converted but could not be moved or deleted as asked.
var ErrNotDisposed = errors.New("some converted inputs were not moved or deleted")
