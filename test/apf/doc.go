// Package apf holds the end-to-end tests of API Priority and Fairness:
// each starts kapi servers of its own (kapitest) and talks to them over
// loopback with client-go and plain HTTPS.
package apf
