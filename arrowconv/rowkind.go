package arrowconv

// RowKind is the kind of a changelog row. The values are Flink's RowKind
// bytes, fixed by hand because they are written to files and must never move.
type RowKind int8

const (
	Insert       RowKind = 0 // +I
	UpdateBefore RowKind = 1 // -U
	UpdateAfter  RowKind = 2 // +U
	Delete       RowKind = 3 // -D
)

var rowKindNames = [...]string{"+I", "-U", "+U", "-D"}

// String returns Flink's short form: +I, -U, +U or -D.
func (k RowKind) String() string {
	if k < 0 || int(k) >= len(rowKindNames) {
		return "??"
	}
	return rowKindNames[k]
}

// ParseRowKind is the inverse of [RowKind.String].
func ParseRowKind(s string) (RowKind, bool) {
	for i, n := range rowKindNames {
		if n == s {
			return RowKind(i), true
		}
	}
	return 0, false
}

// RowKindColumn is the name of the first column of every output.
const RowKindColumn = "_rowkind"
