//go:build !unix

package fileio

import "os"

// openRegular opens the file and checks its kind (systems without FIFOs
// that block an open).
func openRegular(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, openFailed(path, err)
	}
	return checkOpened(f, path)
}
