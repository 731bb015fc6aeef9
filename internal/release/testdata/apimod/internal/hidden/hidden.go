// Package hidden is internal, which the API leaves out.
package hidden

// Visible is exported from an internal package.
func Visible() {}
