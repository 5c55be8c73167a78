//go:build !unix

package snapshot_test

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }
