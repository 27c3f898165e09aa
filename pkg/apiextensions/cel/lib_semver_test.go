package cel

import "testing"

func TestCELSemverLibrary(t *testing.T) {
	runCELLibCases(t, []libCase{
		{rule: "isSemver('1.0.0') && isSemver('0.1.0-alpha.1') && isSemver('1.2.3-rc.1+build.5') && !isSemver('hello') && !isSemver('v1.0') && !isSemver('1.0') && !isSemver('01.0.0') && !isSemver('1.0.0-01')"},
		{rule: "isSemver('v1.0', true) && isSemver('1.0', true) && isSemver('01.01.01', true) && !isSemver('1.0-beta', true) && !isSemver('x', true)"},
		{rule: "semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2 && semver('1.2.3').patch() == 3"},
		{rule: "semver('v1.0', true) == semver('1.0.0') && semver('01.01.01', true) == semver('1.1.1') && semver('1', true) == semver('1.0.0')"},
		{rule: "semver('1.2.3').compareTo(semver('1.2.3')) == 0 && semver('1.2.3').compareTo(semver('2.0.0')) == -1 && semver('1.2.3').compareTo(semver('0.1.2')) == 1"},
		{rule: "semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1')) && semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta')) && semver('1.0.0-beta.2').isLessThan(semver('1.0.0-beta.11'))"},
		{rule: "semver('1.0.0-rc.1').isLessThan(semver('1.0.0')) && semver('1.0.0').isGreaterThan(semver('1.0.0-rc.1')) && !semver('1.0.0').isGreaterThan(semver('1.0.0'))"},
		{rule: "semver('1.0.0+build.1') == semver('1.0.0+build.2') && semver('1.10.0').isGreaterThan(semver('1.9.0'))"},
		{rule: "semver(self.name).isGreaterThan(semver('1.28.0'))", spec: map[string]any{"name": "1.27.3"}, want: "false"},
		{rule: "semver(self.name).major() == 1", spec: map[string]any{"name": "1.2"}, want: "No Major.Minor.Patch elements found"},
		{rule: "semver('1.02.3').major() == 1", want: `Minor number must not contain leading zeroes "02"`},
		{rule: "semver('1.2.x').major() == 1", want: `Invalid character(s) found in patch number "x"`},
		{rule: "semver('1.2-rc', true).major() == 1", want: "short version cannot contain PreRelease/Build meta data"},
	})
}

// TestCELParseSemver checks the parser and precedence on the examples
// of semver.org.
func TestCELParseSemver(t *testing.T) {
	ordered := []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "2.0.0", "2.1.0", "2.1.1"}
	for i := range ordered {
		for j := range ordered {
			a, err := parseSemver(ordered[i])
			if err != nil {
				t.Fatalf("parse %q: %v", ordered[i], err)
			}
			b, err := parseSemver(ordered[j])
			if err != nil {
				t.Fatalf("parse %q: %v", ordered[j], err)
			}
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got := a.compare(b); got != want {
				t.Errorf("compare(%q, %q): got %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"1.2.3-rc.1+build.5", ""},
		{"", "Version string empty"},
		{"1.2.3-", "Prerelease is empty"},
		{"1.2.3-a..b", "Prerelease is empty"},
		{"1.2.3+", "Build meta data is empty"},
		{"1.2.3+a_b", `Invalid character(s) found in build meta "a_b"`},
		{"1.2.3-a$", `Invalid character(s) found in prerelease "a$"`},
		{"a.2.3", `Invalid character(s) found in major number "a"`},
		{"1.2.3-99999999999999999999", `parsing prerelease "99999999999999999999": strconv.ParseUint: parsing "99999999999999999999": value out of range`},
		{"99999999999999999999.0.0", `parsing major number "99999999999999999999": strconv.ParseUint: parsing "99999999999999999999": value out of range`},
	} {
		v, err := parseSemver(tc.in)
		got := ""
		if err != nil {
			got = err.Error()
		} else if v.String() != tc.in {
			got = "round trip: " + v.String()
		}
		if got != tc.want {
			t.Errorf("parse %q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzCELParseSemver parses arbitrary versions: no panic, and a version
// that parses prints back as it was read and equals itself.
func FuzzCELParseSemver(f *testing.F) {
	for _, s := range []string{"1.0.0", "0.1.0-alpha.1", "1.2.3+b", "v1.0", "01.01.01", "1.0-beta", "", "1..2", "1.2.3-0.a"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, normalize bool) {
		if normalize {
			_, _ = normalizeSemver(s)
			return
		}
		v, err := parseSemver(s)
		if err != nil {
			return
		}
		if v.String() != s {
			t.Errorf("parse %q: printed back as %q", s, v.String())
		}
		if v.compare(v) != 0 {
			t.Errorf("%q does not equal itself", s)
		}
	})
}
