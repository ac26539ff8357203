// etcd built by module name from the Go module proxy: go.etcd.io/etcd/server/v3 at the version
// Kubernetes 1.37 is tested with (go.mod), nothing vendored.  etcd's own main package lives in the
// root module go.etcd.io/etcd/v3, whose go.mod replaces its submodules with local paths, so it
// cannot be installed by path@version; this calls the same entry point.  The live test tier
// (tests/live/) runs it.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
