// Package authenticator decides who sent a request: from a verified client
// certificate ([NewX509]), a bearer token ([NewTokenAuthenticator]), or the
// first of several that succeeds ([Union]). The authentication filter turns
// an error into 401 and "no opinion" into the anonymous user.
package authenticator
