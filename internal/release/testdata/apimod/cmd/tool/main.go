// Command tool is a main package, which the API leaves out.
package main

// Exported is exported from a command.
func Exported() {}

func main() {}
