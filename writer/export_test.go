package writer

// SetHoldBytes sets how many bytes of small batches a Parquet writer
// holds at most and returns the function that restores it.
func SetHoldBytes(n int) (restore func()) {
	b := holdBytes
	holdBytes = n
	return func() { holdBytes = b }
}

// SetPageBytes sets the target page size (small: many pages) and returns
// the function that restores it.
func SetPageBytes(n int) (restore func()) {
	p := pageBytes
	pageBytes = n
	return func() { pageBytes = p }
}
