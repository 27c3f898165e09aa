package discovery

import (
	"net/http/httptest"
	"strconv"
)

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func itoa(i int) string { return strconv.Itoa(i) }
