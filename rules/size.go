package rules

import (
	"errors"
	"strconv"
	"strings"
)

// SizeUnits lists the units ParseSize reads, for messages: KB, MB and GB
// are powers of 1000, KiB, MiB and GiB powers of 1024.
const SizeUnits = "B, KB, MB, GB, KiB, MiB or GiB"

// Errors of ParseSize.
var (
	// ErrNotSize is text that is not a whole number with an optional unit.
	ErrNotSize = errors.New("not a size in bytes")
	// ErrSizeRange is a size past the largest a signed 64-bit count holds.
	ErrSizeRange = errors.New("a size too large to count")
)

// sizeUnits are the units ParseSize reads, the binary ones first so that
// "KiB" is never read as "Ki" and "B".
var sizeUnits = []struct {
	suffix string
	mult   int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000_000}, {"GB", 1000_000_000}, {"B", 1}}

// ParseSize reads a size in bytes, as rule files and flags write it: a
// whole number with an optional unit after it, spaces allowed around
// both: 65536, 64KiB, 1 MiB, 100MB. Units are case-sensitive, since "mb"
// could mean either. It fails with ErrNotSize or ErrSizeRange.
func ParseSize(s string) (int64, error) {
	s, mult := strings.TrimSpace(s), int64(1)
	for _, u := range sizeUnits {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, ErrNotSize // no sign, no space inside the number
	}
	n, err := strconv.ParseInt(s, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, ErrSizeRange
	case err != nil:
		return 0, ErrNotSize
	case n > (1<<63-1)/mult:
		return 0, ErrSizeRange
	}
	return n * mult, nil
}

// SizeRule says what ParseSize reads, with example as the first example,
// for a message about text that is no size.
func SizeRule(example string) string {
	return "must be a size in bytes, e.g. " + example + " or 65536, with an optional unit " + SizeUnits
}

// SizeText writes a size as messages give it: in the largest binary unit
// that divides it, else in bytes: 64 KiB, 1 MiB, 2 GiB, 1000 bytes.
// ParseSize reads each form but the last back.
func SizeText(n int64) string {
	for _, u := range []struct {
		unit  string
		shift uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + " " + u.unit
		}
	}
	if n == 1 {
		return "1 byte"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
