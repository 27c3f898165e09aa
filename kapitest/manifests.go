package kapitest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// manifestFiles lists a manifest path: the file itself, or the .yaml,
// .yml and .json files of a directory (one level deep, as envtest reads
// them). A missing path is an error with mustExist, else no files.
func manifestFiles(p string, mustExist bool) ([]string, error) {
	info, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) && !mustExist {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		switch filepath.Ext(e.Name()) {
		case ".yaml", ".yml", ".json":
			if !e.IsDir() {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
	}
	return files, nil
}

// eachDocument calls fn with the kind, apiVersion and bytes of every
// non-empty document of a YAML (multi-document) or JSON file.
func eachDocument(path string, fn func(kind, apiVersion string, doc []byte) error) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return fmt.Errorf("document %d: %w", i, err)
		}
		if err := fn(meta.Kind, meta.APIVersion, doc); err != nil {
			return fmt.Errorf("document %d: %w", i, err)
		}
	}
}
