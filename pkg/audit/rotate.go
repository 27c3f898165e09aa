package audit

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// RotateConfig is when the audit log file is rotated, as upstream's
// --audit-log-maxsize, --audit-log-maxbackup and --audit-log-maxage
// (which upstream hands to lumberjack).
type RotateConfig struct {
	// MaxSizeMB is the size in megabytes at which the file is rotated;
	// 0 means lumberjack's default, 100.
	MaxSizeMB int
	// MaxBackups is how many rotated files are kept; 0 keeps all (unless
	// MaxAgeDays removes them).
	MaxBackups int
	// MaxAgeDays removes rotated files older than that many days; 0 keeps
	// them.
	MaxAgeDays int
	// Compress gzips rotated files (<backup>.gz, as lumberjack's
	// Compress; --audit-log-compress). kapi compresses right after the
	// rotation, in the writer (lumberjack does it in the background).
	Compress bool
}

// backupTimeFormat names rotated files <name>-<time><ext>, as lumberjack.
const backupTimeFormat = "2006-01-02T15-04-05.000"

// rotatingFile is a buffered writer on a file that rotates it before a
// write would make it larger than max. The log backend writes one whole
// event per Write, so no event is split across files.
type rotatingFile struct {
	path string
	cfg  RotateConfig
	max  int64
	now  func() time.Time

	f    *os.File
	w    *bufio.Writer
	size int64
}

func openRotatingFile(path string, cfg RotateConfig) (*rotatingFile, error) {
	r := &rotatingFile{path: path, cfg: cfg, max: int64(cfg.MaxSizeMB) << 20, now: time.Now}
	if r.max <= 0 {
		r.max = 100 << 20
	}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *rotatingFile) open() error {
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open audit log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat audit log: %w", err)
	}
	r.f, r.size = f, st.Size()
	if r.w == nil {
		r.w = bufio.NewWriterSize(f, 64<<10)
	} else {
		r.w.Reset(f)
	}
	return nil
}

// Write writes p, rotating first if p would not fit (a p larger than the
// limit goes alone into a fresh file).
func (r *rotatingFile) Write(p []byte) (int, error) {
	if r.size > 0 && r.size+int64(len(p)) > r.max {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.w.Write(p)
	r.size += int64(n)
	return n, err
}

func (r *rotatingFile) Flush() error { return r.w.Flush() }

func (r *rotatingFile) Close() error {
	ferr := r.w.Flush()
	cerr := r.f.Close()
	if ferr != nil {
		return ferr
	}
	return cerr
}

func (r *rotatingFile) rotate() error {
	if err := r.Close(); err != nil {
		return err
	}
	ext := filepath.Ext(r.path)
	base := strings.TrimSuffix(r.path, ext)
	backup := base + "-" + r.now().UTC().Format(backupTimeFormat) + ext
	if err := os.Rename(r.path, backup); err != nil {
		return fmt.Errorf("rotate audit log: %w", err)
	}
	if err := r.open(); err != nil {
		return err
	}
	if r.cfg.Compress {
		if err := compressFile(backup); err != nil {
			return err
		}
	}
	return r.prune()
}

// compressFile gzips path into path.gz (same mode) and removes path.
func compressFile(path string) (err error) {
	in, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("compress audit log backup: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(path+".gz", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("compress audit log backup: %w", err)
	}
	zw := gzip.NewWriter(out)
	_, err = io.Copy(zw, in)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path + ".gz")
		return fmt.Errorf("compress audit log backup: %w", err)
	}
	return os.Remove(path)
}

// prune removes the rotated files beyond MaxBackups (oldest first) and
// those older than MaxAgeDays.
func (r *rotatingFile) prune() error {
	if r.cfg.MaxBackups <= 0 && r.cfg.MaxAgeDays <= 0 {
		return nil
	}
	dir := filepath.Dir(r.path)
	ext := filepath.Ext(r.path)
	prefix := strings.TrimSuffix(filepath.Base(r.path), ext) + "-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list audit log backups: %w", err)
	}
	type backup struct {
		name string
		t    time.Time
	}
	var backups []backup
	for _, e := range entries {
		n := e.Name()
		stem := strings.TrimSuffix(n, ".gz")
		if e.IsDir() || !strings.HasPrefix(stem, prefix) || !strings.HasSuffix(stem, ext) {
			continue
		}
		t, err := time.Parse(backupTimeFormat, strings.TrimSuffix(strings.TrimPrefix(stem, prefix), ext))
		if err != nil {
			continue
		}
		backups = append(backups, backup{n, t})
	}
	sort.Slice(backups, func(i, j int) bool { return backups[i].t.After(backups[j].t) })
	cutoff := r.now().Add(-time.Duration(r.cfg.MaxAgeDays) * 24 * time.Hour)
	for i, b := range backups {
		tooMany := r.cfg.MaxBackups > 0 && i >= r.cfg.MaxBackups
		tooOld := r.cfg.MaxAgeDays > 0 && b.t.Before(cutoff)
		if tooMany || tooOld {
			if err := os.Remove(filepath.Join(dir, b.name)); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("remove audit log backup: %w", err)
			}
		}
	}
	return nil
}
