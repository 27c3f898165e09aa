// Package params reads admission policies' param objects of any kind,
// built-in or custom, through a client of the server itself (the loopback
// client), as upstream's policy plugins read them (through informers
// there; here each evaluation reads them, so a param written is in effect
// at once). Kinds are mapped to resources through discovery, refreshed
// when a kind is not found (a CRD created since).
package params
