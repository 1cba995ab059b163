package explore

// SetDiskSync turns the disk search's fsyncs on or off (tests run without
// them, faster) and returns a function that restores the setting.
func SetDiskSync(on bool) (restore func()) {
	old := diskSync
	diskSync = on
	return func() { diskSync = old }
}

// SetDiskFingerprint replaces the fingerprint of the disk search's
// fingerprint mode by fp (a test makes fingerprints collide) and returns
// a function that restores it.
func SetDiskFingerprint(fp func([]byte) uint64) (restore func()) {
	old := fingerprintOf
	fingerprintOf = fp
	return func() { fingerprintOf = old }
}
