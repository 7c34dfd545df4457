package spec

import "os/exec"

func execLookPath(name string) (string, error) { return exec.LookPath(name) }

func execOutput(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	return string(out), err
}
