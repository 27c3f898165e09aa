// Command kapi is a Kubernetes API server.
package main

import (
	"fmt"
	"os"

	"github.com/kapi-dev/kapi/internal/app"
)

func main() {
	cmd := app.NewCommand()
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		os.Exit(1)
	}
}
