package explore

// SetSuccCache sets the level size from which workers use successor
// caches (-1: never) and the caches' size (0, 0: the default), and
// returns the settings to restore.
func SetSuccCache(from int, bits uint, ring int) (restore func()) {
	oldFrom, oldBits, oldRing := succCacheFrom, succCacheBits, succCacheRing
	if from < 0 {
		from = 1 << 62
	}
	succCacheFrom = from
	if bits > 0 {
		succCacheBits, succCacheRing = bits, ring
	}
	return func() { succCacheFrom, succCacheBits, succCacheRing = oldFrom, oldBits, oldRing }
}

// SetSortChunk sets the number of keys a frontier search's duplicate
// check sorts in memory at once, and returns a function that restores it.
func SetSortChunk(n int) (restore func()) {
	old := sortChunk
	sortChunk = n
	return func() { sortChunk = old }
}
