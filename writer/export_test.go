package writer

// SetCoalesce sets how many rows (and bytes) of small batches a Parquet
// writer holds back before writing them together; rows 0 writes every
// batch at once. It returns the function that restores the settings.
func SetCoalesce(rows, bytes int) (restore func()) {
	r, b := coalesceRows, coalesceBytes
	coalesceRows, coalesceBytes = rows, bytes
	return func() { coalesceRows, coalesceBytes = r, b }
}

// SetPageBytes sets the target page size (small: many pages) and returns
// the function that restores it.
func SetPageBytes(n int) (restore func()) {
	p := pageBytes
	pageBytes = n
	return func() { pageBytes = p }
}
