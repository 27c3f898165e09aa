package cel

import "testing"

func TestCELURLLibrary(t *testing.T) {
	runCELLibCases(t, []libCase{
		{rule: "isURL('https://user:pass@example.com:80/path?query=val#fragment') && isURL('/absolute-path') && !isURL('../relative-path') && !isURL('#!@#$%^&*()')"},
		{rule: "url('https://example.com:80/').getScheme() == 'https' && url('/path').getScheme() == ''"},
		{rule: "url('https://example.com:80/').getHost() == 'example.com:80' && url('https://[::1]:80/').getHost() == '[::1]:80' && url('/path').getHost() == ''"},
		{rule: "url('https://example.com:80/').getHostname() == 'example.com' && url('https://[::1]:80/').getHostname() == '::1'"},
		{rule: "url('https://example.com:80/').getPort() == '80' && url('https://example.com/').getPort() == ''"},
		{rule: "url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/' && url('https://example.com').getEscapedPath() == ''"},
		{rule: "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}"},
		{rule: "url('https://example.com/path?key with spaces=value with spaces').getQuery() == {'key with spaces': ['value with spaces']} && url('https://example.com/path?').getQuery() == {}"},
		{rule: "url('https://example.com/path#frag').getEscapedPath() == '/path' && url('https://a.b/') == url('https://a.b/')"},
		{rule: "url(self.name).getScheme() == 'https'", spec: map[string]any{"name": "http://example.com"}, want: "false"},
		{rule: "url(self.name).getScheme() == 'https'", spec: map[string]any{"name": "../x"},
			want: `URL parse error during conversion from string: parse "../x": invalid URI for request`},
	})
}
