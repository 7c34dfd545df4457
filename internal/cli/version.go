package cli

import (
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/mod/module"

	"github.com/slogate/slogate/internal/exit"
	"github.com/slogate/slogate/internal/views/helpview"
)

// Version is what `slogate version` prints: which slogate this is, the
// commit it was built from and the Go toolchain that built it. The type
// is the view's (helpview imports nothing of slogate, so cli hands it
// the figures as they are).
type Version = helpview.Version

// BuildVersion works out the version of the running binary. make stamps
// ldVersion and ldCommit with -ldflags (main.version, main.commit);
// `go install …@v1.2.0` leaves them unset ("dev", "") and records the
// module version in the build info, a pseudo-version carrying the commit
// for `@latest` of an untagged commit; `go build` inside a checkout
// records vcs.revision, vcs.time and vcs.modified. The stamped values win,
// then the VCS settings, then what the module version says. info may be nil.
func BuildVersion(ldVersion, ldCommit string, info *debug.BuildInfo) Version {
	v := Version{Version: "dev", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info != nil {
		if info.GoVersion != "" {
			v.Go = info.GoVersion
		}
		if mv := info.Main.Version; mv != "" && mv != "(devel)" {
			v.Version = mv
			v.Modified = strings.HasSuffix(mv, "+dirty")
			base := strings.TrimSuffix(mv, "+dirty")
			if module.IsPseudoVersion(base) {
				v.Commit, _ = module.PseudoVersionRev(base)
				v.Time, _ = module.PseudoVersionTime(base)
			}
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.time":
				if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
					v.Time = t
				}
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if ldVersion != "" && ldVersion != "dev" {
		v.Version = ldVersion
		v.Modified = v.Modified || strings.HasSuffix(ldVersion, "-dirty")
	}
	if ldCommit != "" {
		v.Commit = ldCommit
	}
	return v
}

// RunVersion is the `version` command (also -version, --version): it prints
// v, one line, on stdout.
func RunVersion(stdout io.Writer, args []string, v Version) error {
	fls := CommandFlagSet("version")
	rest, err := fls.Parse(stdout, args)
	if err != nil {
		return err
	}
	if err := fls.WantArgs(rest, 0, "no arguments"); err != nil {
		return err
	}
	err = helpview.WriteVersion(stdout, v)
	return exit.With(exit.Infra, err)
}
