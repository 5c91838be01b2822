// Package javatext reads numbers and times from text exactly as Flink's
// JSON formats do through Java: Jackson's and Long.parseLong's integers,
// Double.parseDouble's floats (hex and suffixed literals included),
// BigDecimal's decimals with HALF_UP rounding, and the date, time and
// timestamp patterns of Flink's formatters (SQL and ISO-8601, SMART and
// STRICT resolution), plus the producers' own (GoldenGate's op_ts and
// current_ts). It holds no JSON: decode's converters call it with a
// value's text.
package javatext
