package retryvet

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// A directive is one verb of a fmt format string, with its flags, width,
// precision and argument index.
type directive struct {
	start, end int  // byte offsets of the directive in the format, from its % to its verb
	verb       rune // the verb: 'v' in "%+v"
	arg        int  // the argument it formats, 0 for the first after the format
	star       bool // a width or precision comes from an argument
}

// parseFormat returns the directives of format that format an argument,
// following the rules of package fmt: flags, then an optional argument
// index, width and precision (either may be *), and the verb. %% is left
// out, as it formats no argument.
func parseFormat(format string) []directive {
	var out []directive
	arg := 0
	for i := 0; i < len(format); {
		if format[i] != '%' {
			i++
			continue
		}
		d := directive{start: i}
		i++
		for i < len(format) && strings.IndexByte("+-# 0", format[i]) >= 0 {
			i++
		}
		i, arg = argIndex(format, i, arg)
		i, arg = number(format, i, arg, &d)
		if i < len(format) && format[i] == '.' {
			i, arg = argIndex(format, i+1, arg)
			i, arg = number(format, i, arg, &d)
		}
		i, arg = argIndex(format, i, arg)
		if i >= len(format) {
			break
		}
		r, size := utf8.DecodeRuneInString(format[i:])
		i += size
		if r == '%' {
			continue
		}
		d.end, d.verb, d.arg = i, r, arg
		arg++
		out = append(out, d)
	}
	return out
}

// argIndex reads an explicit argument index "[n]" at format[i:], if there
// is one, and returns the offset after it and the argument it selects.
func argIndex(format string, i, arg int) (int, int) {
	if i >= len(format) || format[i] != '[' {
		return i, arg
	}
	end := strings.IndexByte(format[i:], ']')
	if end < 0 {
		return i, arg
	}
	n, err := strconv.Atoi(format[i+1 : i+end])
	if err != nil || n < 1 {
		return i, arg
	}
	return i + end + 1, n - 1
}

// number reads a width or precision at format[i:]: digits, or a * that
// takes an argument.
func number(format string, i, arg int, d *directive) (int, int) {
	if i < len(format) && format[i] == '*' {
		d.star = true
		return i + 1, arg + 1
	}
	for i < len(format) && '0' <= format[i] && format[i] <= '9' {
		i++
	}
	return i, arg
}
