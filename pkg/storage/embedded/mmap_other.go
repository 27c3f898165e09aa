//go:build !linux

package embedded

// checkMmapFlags are the mmap flags of the data check's read-only
// mapping (MAP_POPULATE on Linux, see mmap_linux.go).
const checkMmapFlags = 0
