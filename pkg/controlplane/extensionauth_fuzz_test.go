package controlplane

import (
	"testing"
	"time"
)

// FuzzAuthInfoData feeds arbitrary configmap data (anyone allowed to
// write kube-system configmaps controls it) through the merge: it never
// panics, and merging its own output again changes nothing.
func FuzzAuthInfoData(f *testing.F) {
	f.Add("", `["X-Remote-User"]`, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	f.Add("not pem", "[", "")
	f.Add("", `["a","a","b"]`, "x")
	f.Fuzz(func(t *testing.T, clientCA, list, rhCA string) {
		c := &clusterAuthInfo{now: time.Now}
		c.required, _ = parseAuthInfo(map[string]string{keyRHClientCA: rhCA, keyRHUsername: list}, false)
		once := c.merged(map[string]string{keyClientCA: clientCA, keyRHClientCA: rhCA, keyRHGroup: list, keyRHAllowed: list})
		twice := c.merged(once)
		if len(once) != len(twice) {
			t.Fatalf("got %v then %v, want a fixed point", once, twice)
		}
		for k, v := range once {
			if twice[k] != v {
				t.Fatalf("got %s=%q then %q, want a fixed point", k, v, twice[k])
			}
		}
	})
}
