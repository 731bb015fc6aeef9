package apimod

// TestOnly is declared in a test file, which the API leaves out.
func TestOnly() {}
