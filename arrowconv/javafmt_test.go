package arrowconv

import (
	"math"
	"testing"
)

// Expected strings are what Java 19+ prints for the same values.
func TestAppendJavaDouble(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{3.14, "3.14"}, {1, "1.0"}, {100, "100.0"}, {0, "0.0"}, {math.Copysign(0, -1), "-0.0"},
		{1e-5, "1.0E-5"}, {1e7, "1.0E7"}, {9999999, "9999999.0"}, {0.001, "0.001"}, {0.0001, "1.0E-4"},
		{123.234, "123.234"}, {1.1211111111013e10, "1.1211111111013E10"}, {-2.5, "-2.5"},
		{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"},
		{4.9e-324, "4.9E-324"}, {math.MaxFloat64, "1.7976931348623157E308"}, {1e23, "1.0E23"},
		{0.8, "0.8"}, {2e-3, "0.002"},
	}
	for _, tt := range tests {
		if got := string(AppendJavaDouble(nil, tt.in)); got != tt.want {
			t.Errorf("Double.toString(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAppendJavaFloat(t *testing.T) {
	tests := []struct {
		in   float32
		want string
	}{
		{3.14, "3.14"}, {1, "1.0"}, {0.8, "0.8"}, {22.2, "22.2"}, {5.18, "5.18"}, {0.1, "0.1"},
		{math.MaxFloat32, "3.4028235E38"}, {1e10, "1.0E10"}, {1.4e-45, "1.4E-45"},
	}
	for _, tt := range tests {
		if got := string(AppendJavaFloat(nil, tt.in)); got != tt.want {
			t.Errorf("Float.toString(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAppendBigDecimal(t *testing.T) {
	tests := []struct {
		neg    bool
		digits string
		scale  int
		want   string
	}{
		{false, "510", 2, "5.10"}, {false, "1", -2, "1E+2"}, {false, "1", 8, "1E-8"}, {false, "1", 6, "0.000001"},
		{true, "123", 0, "-123"}, {false, "27", 9, "2.7E-8"}, {false, "45462186404924617", -1, "4.5462186404924617E+17"},
		{false, "0", 2, "0.00"}, {false, "15", -2, "1.5E+3"},
	}
	for _, tt := range tests {
		if got := string(AppendBigDecimal(nil, tt.neg, []byte(tt.digits), tt.scale)); got != tt.want {
			t.Errorf("BigDecimal(%v %s scale %d) = %q, want %q", tt.neg, tt.digits, tt.scale, got, tt.want)
		}
	}
}
