package app

import (
	"fmt"

	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/certificates"
)

// clusterSigners loads the CAs of --cluster-signing-*-file by signer name;
// nil when none is given (the signers use the cluster CA).
func (c *Config) clusterSigners() (map[string]certificates.CA, error) {
	files := c.Options.CSRSigning.SignerFiles()
	if files == nil {
		return nil, nil
	}
	out := make(map[string]certificates.CA, len(files))
	for signer, f := range files {
		ca, err := certificates.LoadCA(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("signer %s: %w", signer, err)
		}
		out[signer] = ca
	}
	return out, nil
}
