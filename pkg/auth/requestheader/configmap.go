package requestheader

import "encoding/json"

// Name and namespace of the configmap in which kube-apiserver publishes
// how extension API servers should authenticate it and its clients.
const (
	ConfigMapNamespace = "kube-system"
	ConfigMapName      = "extension-apiserver-authentication"
)

// AuthenticationConfigMapData returns the data of the
// kube-system/extension-apiserver-authentication configmap, with the keys
// and encodings kube-apiserver writes:
//
//	client-ca-file                      clientCAPEM (if not empty)
//	requestheader-client-ca-file        rhCAPEM
//	requestheader-allowed-names         JSON array of rh.AllowedNames
//	requestheader-username-headers      JSON array of rh.UsernameHeaders
//	requestheader-uid-headers           JSON array of rh.UIDHeaders
//	requestheader-group-headers         JSON array of rh.GroupHeaders
//	requestheader-extra-headers-prefix  JSON array of rh.ExtraHeaderPrefixes
//
// As upstream, the requestheader-* keys are present only when rhCAPEM is
// not empty, and empty lists are written as []. rh.ClientCA is not used:
// the PEM is passed separately because a pool cannot be encoded.
func AuthenticationConfigMapData(clientCAPEM []byte, rh Config, rhCAPEM []byte) map[string]string {
	data := map[string]string{}
	if len(clientCAPEM) > 0 {
		data["client-ca-file"] = string(clientCAPEM)
	}
	if len(rhCAPEM) == 0 {
		return data
	}
	data["requestheader-client-ca-file"] = string(rhCAPEM)
	data["requestheader-allowed-names"] = jsonList(rh.AllowedNames)
	data["requestheader-username-headers"] = jsonList(rh.UsernameHeaders)
	data["requestheader-uid-headers"] = jsonList(rh.UIDHeaders)
	data["requestheader-group-headers"] = jsonList(rh.GroupHeaders)
	data["requestheader-extra-headers-prefix"] = jsonList(rh.ExtraHeaderPrefixes)
	return data
}

// jsonList encodes a string list as a JSON array, [] when empty.
func jsonList(list []string) string {
	if list == nil {
		list = []string{}
	}
	b, _ := json.Marshal(list) // a []string always encodes
	return string(b)
}
