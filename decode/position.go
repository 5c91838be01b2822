package decode

// The source-position metadata key: where a change sits in its source's
// log, as text that sorts in log order among the changes of one source
// (one MySQL server, one Postgres slot, one GoldenGate trail). Components
// are joined by "/"; a number is zero-padded to 20 digits so that text
// order is numeric order; a component the message lacks is empty:
//
//	canal-json     es/id                       (event time ms, message id)
//	maxwell-json   FILE/OFFSET/XOFFSET         (from position "FILE:OFFSET"),
//	               or ts/xid/xoffset without a position
//	ogg-json       pos                         (trail sequence and RBA), or csn
//	debezium-json  by source.connector:
//	  mysql        file/pos/row
//	  postgresql   lsn
//	  sqlserver    commit_lsn/change_lsn/event_serial_no
//	  oracle       commit_scn/scn
//	  mongodb      ts_ms/ord
//	  others       ts_ms, then every position field the source has
//
// A message with none of its format's fields has a NULL position.

const zeros = "00000000000000000000"

// appendPositionPart appends one component: a non-negative integer
// zero-padded to 20 digits, anything else as it is.
func appendPositionPart(b, v []byte) []byte {
	digits := len(v) > 0 && len(v) <= 20
	for _, c := range v {
		if c < '0' || c > '9' {
			digits = false
			break
		}
	}
	if !digits {
		return append(b, v...)
	}
	return append(append(b, zeros[:20-len(v)]...), v...)
}

// AppendPositionPart appends one component of a source position as the
// source-position metadata column writes it (a number zero-padded to 20
// digits, anything else as it is).
func AppendPositionPart(b, v []byte) []byte { return appendPositionPart(b, v) }
