package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
)

const versionUsage = `usage: linoone version

Prints the module version, the VCS revision it was built from and the Go version.

example:
  linoone version
`

// versionCmd prints the main module's version and the VCS revision (and whether the
// tree was modified) recorded in the binary's build information.
func versionCmd(args []string, stdout io.Writer) error {
	if _, err := parse(newFlags("version"), args, 0, 0); err != nil {
		return err
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return errors.New("no build information in this binary")
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	revision := settings["vcs.revision"]
	if revision == "" {
		revision = "unknown"
	}
	if settings["vcs.modified"] == "true" {
		revision += " (modified)"
	}
	_, err := fmt.Fprintf(stdout, "linoone %s %s\nrevision %s\n%s\n", bi.Main.Path, bi.Main.Version, revision, bi.GoVersion)
	return err
}
