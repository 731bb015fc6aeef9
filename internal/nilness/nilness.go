// Package nilness tells whether an interface value holds nothing usable:
// nil, or a nil function, pointer, map, slice, channel or interface, each of
// which a method call on it may panic over.
package nilness

import "reflect"

// Of reports whether v is nil or holds a nil function, pointer, map,
// slice, channel or interface.
func Of(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Func, reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
