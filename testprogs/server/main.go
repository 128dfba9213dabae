// SPDX-License-Identifier: Apache-2.0

// Command server is a net/http service whose handlers hold memory while they wait:
// handlers requests to /upload are in flight, each handler blocked on a channel with a
// bufSize-byte buf local (plus a string, an error and the request's context, as real
// handlers have), when the dump is written. Clients in the same program make the
// requests over loopback and wait for their answers.
//
// In a default (optimised) build the compiler keeps buf as pieces: its pointer in a
// stack slot, its length and capacity nowhere (DW_OP_piece): the buffers must still be
// charged to main.upload.buf, not to the function main.upload.
//
// Usage: server DUMPFILE
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

const (
	handlers = 20
	bufSize  = 64 << 10
)

var (
	release = make(chan struct{})
	parked  sync.WaitGroup
	bufs    [handlers]uintptr // where each handler's buf is, for the facts
	bufsMu  sync.Mutex
	nextBuf int
)

var errClosed = errors.New("closed")

//go:noinline
func fill(b []byte, id string) {
	for i := range b {
		b[i] = id[i%len(id)]
	}
}

//go:noinline
func record(b []byte) {
	bufsMu.Lock()
	bufs[nextBuf] = uintptr(unsafe.Pointer(&b[0]))
	nextBuf++
	bufsMu.Unlock()
}

func upload(w http.ResponseWriter, r *http.Request) {
	buf := make([]byte, bufSize)
	id := r.URL.Query().Get("id") + strings.Repeat("-", 24)
	fill(buf, id)
	record(buf)
	ctx := r.Context()
	var err error
	parked.Done()
	select {
	case <-release:
	case <-ctx.Done():
		err = errClosed
	}
	if err != nil {
		return
	}
	w.Write(buf[:len(id)])
	runtime.KeepAlive(buf)
}

func main() {
	path := dump.Path(os.Args[1:])

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		dump.Fail(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/upload", upload)
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)

	parked.Add(handlers)
	var done sync.WaitGroup
	client := &http.Client{Timeout: time.Minute}
	for i := 0; i < handlers; i++ {
		done.Add(1)
		go func(i int) {
			defer done.Done()
			resp, err := client.Get(fmt.Sprintf("http://%s/upload?id=%d", ln.Addr(), i))
			if err != nil {
				dump.Fail(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}(i)
	}
	parked.Wait()

	facts := dump.NewFacts()
	facts["handlers"] = handlers
	facts["buf_size"] = bufSize
	facts["handler_function"] = "main.upload"
	addrs := make([]int64, handlers)
	for i, a := range bufs {
		addrs[i] = int64(a)
	}
	facts["buf_addrs"] = addrs
	facts["kept_objects"] = int64(handlers)
	facts["kept_bytes"] = int64(handlers * bufSize)

	dump.Write(path)
	close(release)
	done.Wait()
	srv.Shutdown(context.Background())
	facts.Print()
}
