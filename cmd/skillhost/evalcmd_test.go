package main

import "testing"

func TestFormatThreshold(t *testing.T) {
	for _, c := range []struct {
		th   float64
		want string
	}{
		{0, "0.00"}, {1, "1.00"}, {0.5, "0.50"}, {0.2, "0.20"}, {0.05, "0.05"},
		{0.18125, "0.18125"}, {0.440625, "0.440625"}, {1e-9, "0.000000001"},
	} {
		if got := formatThreshold(c.th); got != c.want {
			t.Errorf("formatThreshold(%v) = %q, want %q", c.th, got, c.want)
		}
	}
}
