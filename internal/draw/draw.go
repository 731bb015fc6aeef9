// Package draw gives the simulations of internal/storm and internal/tail
// their random numbers: fixed by a seed, a call and an attempt, so that
// every client and every clock sees the same draws.
package draw

// Unit returns a number in [0, 1) fixed by seed, call and attempt.
func Unit(seed, call, attempt uint64) float64 {
	x := seed ^ call<<20 ^ attempt
	// splitmix64's finaliser
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}
