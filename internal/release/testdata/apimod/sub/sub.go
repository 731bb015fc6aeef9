// Package sub refers to its parent package.
package sub

import "example.com/apimod"

// New returns a parent's type.
func New() *apimod.Config { return nil }
