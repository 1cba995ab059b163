package explore

// SetDiskSync turns the disk search's fsyncs on or off (tests run without
// them, faster) and returns a function that restores the setting.
func SetDiskSync(on bool) (restore func()) {
	old := diskSync
	diskSync = on
	return func() { diskSync = old }
}
