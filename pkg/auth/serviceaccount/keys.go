package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Names of the key pair kapi generates in --cert-dir when no
// --service-account-signing-key-file is given (kubeadm's names).
const (
	GeneratedKeyFile       = "sa.key"
	GeneratedPublicKeyFile = "sa.pub"
)

// ParsePrivateKey reads the first private key of a PEM file: PKCS#1 RSA,
// SEC 1 EC or PKCS#8.
func ParsePrivateKey(data []byte) (crypto.Signer, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errors.New("no private key found in PEM data")
		}
		switch block.Type {
		case "RSA PRIVATE KEY":
			return x509.ParsePKCS1PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			return x509.ParseECPrivateKey(block.Bytes)
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				return nil, err
			}
			s, ok := k.(crypto.Signer)
			if !ok {
				return nil, fmt.Errorf("unsupported private key type %T", k)
			}
			return s, nil
		}
	}
}

// ParsePublicKeys reads every public key of a PEM file, as upstream's
// --service-account-key-file accepts them: public keys (PKIX or PKCS#1),
// the public halves of private keys, and the keys of certificates.
func ParsePublicKeys(data []byte) ([]crypto.PublicKey, error) {
	var keys []crypto.PublicKey
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		var (
			k   crypto.PublicKey
			err error
		)
		switch block.Type {
		case "PUBLIC KEY":
			k, err = x509.ParsePKIXPublicKey(block.Bytes)
		case "RSA PUBLIC KEY":
			k, err = x509.ParsePKCS1PublicKey(block.Bytes)
		case "CERTIFICATE":
			var c *x509.Certificate
			if c, err = x509.ParseCertificate(block.Bytes); err == nil {
				k = c.PublicKey
			}
		case "RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY":
			var s crypto.Signer
			if s, err = ParsePrivateKey(pem.EncodeToMemory(block)); err == nil {
				k = s.Public()
			}
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s block: %w", block.Type, err)
		}
		switch k.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey:
			keys = append(keys, k)
		default:
			return nil, fmt.Errorf("unsupported public key type %T", k)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("data does not contain any valid RSA or ECDSA public keys")
	}
	return keys, nil
}

// LoadPrivateKeyFile reads a signing key file.
func LoadPrivateKeyFile(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// LoadPublicKeyFiles reads the public keys of every file.
func LoadPublicKeyFiles(paths []string) ([]crypto.PublicKey, error) {
	var keys []crypto.PublicKey
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		k, err := ParsePublicKeys(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		keys = append(keys, k...)
	}
	return keys, nil
}

// EnsureGeneratedKey returns the key pair in dir (GeneratedKeyFile,
// GeneratedPublicKeyFile), generating one first if there is none. It
// returns the private key path.
//
// The generated key is ECDSA P-256 (tokens signed ES256), not kubeadm's
// RSA 2048: every server kapitest starts generates one, and an RSA key
// takes far longer to make than kapi takes to start. Any RSA or ECDSA key
// can be given with --service-account-signing-key-file.
func EnsureGeneratedKey(dir string) (crypto.Signer, string, error) {
	return EnsureGeneratedKeyDeferred(dir, nil)
}

// EnsureGeneratedKeyDeferred is EnsureGeneratedKey handing the writes of
// a generated key (the directory, then the public key, then the private
// key) to deferWrite as one function, which the caller must run before
// anything reads them; nil writes them before returning.
func EnsureGeneratedKeyDeferred(dir string, deferWrite func(write func() error)) (crypto.Signer, string, error) {
	keyPath := filepath.Join(dir, GeneratedKeyFile)
	pubPath := filepath.Join(dir, GeneratedPublicKeyFile)
	if k, err := LoadPrivateKeyFile(keyPath); err == nil {
		return k, keyPath, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, "", err
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", fmt.Errorf("generate service account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		return nil, "", err
	}
	keyDER, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, "", err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	write := func() error {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		// The public key first: a crash between the two leaves no private
		// key without its public half.
		if err := writeFileAtomic(pubPath, pubPEM, 0o644); err != nil {
			return err
		}
		return writeFileAtomic(keyPath, keyPEM, 0o600)
	}
	if deferWrite != nil {
		deferWrite(write)
	} else if err := write(); err != nil {
		return nil, "", err
	}
	return k, keyPath, nil
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}
