// kube-apiserver built by module name from the Go module proxy: k8s.io/kubernetes at the pinned
// patch release (go.mod), nothing vendored.  The live test tier (tests/live/) runs it.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
