// SPDX-License-Identifier: Apache-2.0

// Command bigbin is a large Go program for the binary reader's benchmark
// (bench/bench_binary.sh): it links net/http, encoding/json, crypto/tls,
// database/sql, html/template, go/types and most of the rest of the standard
// library (see keep.go) so that its DWARF is the size of a real service's: tens
// of MB of binary, a few hundred thousand DIEs. It does nothing useful; with a
// DUMPFILE argument it writes a heap dump like the other programs. It builds
// with Go 1.19 and later.
//
// Usage: bigbin DUMPFILE
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"encoding/xml"
	"flag"
	"html/template"
	"log"
	"net/http"
	"net/http/httptest"
	"net/smtp"
	"os"
	"regexp"
	"text/tabwriter"
	"time"

	"heapref/testprogs/internal/dump"
)

var (
	client  = &http.Client{Timeout: time.Second}
	tlsConf = &tls.Config{MinVersion: tls.VersionTLS12}
	pool    = x509.NewCertPool()
	re      = regexp.MustCompile(`^[a-z]+\d*$`)
	tmpl    = template.Must(template.New("t").Parse("<p>{{.}}</p>"))
	logger  = log.New(os.Stderr, "bigbin: ", log.LstdFlags)
	drivers = sql.Drivers
	mailer  = smtp.PlainAuth
)

func main() {
	flag.Parse()
	path := dump.Path(flag.Args())
	facts := dump.NewFacts()

	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"path": r.URL.Path})
	}))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_ = xml.NewEncoder(zw).Encode(struct{ A int }{1})
	_ = zw.Close()
	tw := tabwriter.NewWriter(&buf, 0, 8, 1, ' ', 0)
	_ = tw.Flush()
	_ = tmpl.Execute(&buf, re.MatchString("abc1"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_ = ctx
	_ = drivers()
	_ = mailer
	facts["kept_objects"] = 1
	facts["kept_bytes"] = buf.Len()
	facts["tls_min"] = int(tlsConf.MinVersion)
	facts["has_pool"] = pool != nil
	facts["client_timeout"] = client.Timeout.String()
	kept := 0
	for _, v := range keep {
		if v != nil {
			kept++
		}
	}
	facts["kept_entry_points"] = kept
	srv.Close()
	if len(os.Getenv("BIGBIN_VERBOSE")) > 0 {
		logger.Println("done")
	}
	dump.Write(path)
	facts.Print()
}
