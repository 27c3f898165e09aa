// Package serviceaccount serves core/v1 serviceaccounts: names are DNS-1123
// subdomains and secret references are reduced to their names.
package serviceaccount
