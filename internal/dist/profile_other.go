//go:build !unix

package dist

import "time"

// processUserSys is not measured here.
func processUserSys() (user, sys time.Duration) { return 0, 0 }
