package hfmodel

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteDir writes m's files into dir (created if missing) and returns how
// many bytes they hold. Each file is written aside, then renamed, so that
// a server reading the directory never sees half a file.
func (m Llama) WriteDir(dir string) (int, error) {
	files, err := m.Files()
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	var n int
	for _, f := range files {
		if err := writeAside(filepath.Join(dir, f.Name), f.Data); err != nil {
			return n, err
		}
		n += len(f.Data)
	}
	return n, nil
}

// writeAside writes data to a temporary file beside path, then renames it
// to path.
func writeAside(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
