// Package nested is a nested module's package that imports an internal
// package of the root module.
package nested

import "example.com/apimod/internal/hidden"

// Run calls into the root's internal package.
func Run() { hidden.Visible() }
