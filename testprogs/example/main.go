// SPDX-License-Identifier: Apache-2.0

// Command example is the README quick-start example: a tiny "leaky service"
// whose memory is held in three places.
//
//	main.sessions map[string]*Session (200 sessions)
//	    -> Session -> ID string, Payload (8 KiB), Events slice
//	                  -> 16 *Event -> Event -> Data (256 B)
//	main.pool     []*Conn (32 connections)
//	    -> Conn -> rbuf (32 KiB), wbuf (32 KiB)
//	goroutine in main.janitor, blocked in "chan receive",
//	    local scratch -> 512 KiB buffer
//
// About 5 MiB in total. A correct analysis must rank main.sessions first
// (about 2.5 MiB), then main.pool (about 2 MiB), then the janitor
// goroutine's frame (512 KiB), with at least the kept_* figures of each.
//
// Usage: example DUMPFILE
package main

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"heapref/testprogs/internal/dump"
)

type Event struct {
	Kind int
	At   int64
	Data []byte
}

type Session struct {
	ID      string
	User    int64
	Payload []byte
	Events  []*Event
}

type Conn struct {
	ID   int
	rbuf []byte
	wbuf []byte
}

const (
	numSessions      = 200
	payloadSize      = 8 << 10
	eventsPerSession = 16
	eventDataSize    = 256
	numConns         = 32
	connBufSize      = 32 << 10
	scratchSize      = 512 << 10
)

var (
	sessions map[string]*Session
	pool     []*Conn
)

var (
	janitorSink    int
	janitorScratch uintptr // address only, keeps nothing alive
)

// janitor pretends to clean up periodically; it holds a scratch buffer in a
// local while it waits for work that never comes. It must not be inlined
// into the compiler's "go" statement wrapper (main.main.gowrap1), so the
// frame is named main.janitor.
//
//go:noinline
func janitor(ready chan<- struct{}, work <-chan int) {
	scratch := make([]byte, scratchSize)
	for i := range scratch {
		scratch[i] = byte(i)
	}
	janitorScratch = uintptr(unsafe.Pointer(&scratch[0]))
	ready <- struct{}{}
	for n := range work {
		janitorSink += int(scratch[n%len(scratch)])
	}
	runtime.KeepAlive(scratch)
}

func handleRequest(id int) {
	key := fmt.Sprintf("sess-%011d", id) // 16 bytes
	s := &Session{ID: key, User: int64(id), Payload: make([]byte, payloadSize)}
	for i := range s.Payload {
		s.Payload[i] = byte(id)
	}
	for e := 0; e < eventsPerSession; e++ {
		ev := &Event{Kind: e, At: int64(id*1000 + e), Data: make([]byte, eventDataSize)}
		ev.Data[0] = byte(e)
		s.Events = append(s.Events, ev)
	}
	sessions[key] = s
}

func main() {
	path := dump.Path(os.Args[1:])

	sessions = make(map[string]*Session)
	for i := 0; i < numSessions; i++ {
		handleRequest(i)
	}
	pool = make([]*Conn, 0, numConns)
	for i := 0; i < numConns; i++ {
		pool = append(pool, &Conn{ID: i, rbuf: make([]byte, connBufSize), wbuf: make([]byte, connBufSize)})
	}
	ready := make(chan struct{})
	work := make(chan int)
	go janitor(ready, work)
	<-ready

	ptrSize := int64(unsafe.Sizeof(uintptr(0)))
	sessSize := int64(unsafe.Sizeof(Session{}))
	eventSize := int64(unsafe.Sizeof(Event{}))
	connSize := int64(unsafe.Sizeof(Conn{}))
	keySize := int64(len(fmt.Sprintf("sess-%011d", 0)))
	// Per session: Session, key string, payload, events backing array (at
	// least 16 pointers), 16 Events with their data.
	perSession := sessSize + keySize + payloadSize + eventsPerSession*ptrSize +
		eventsPerSession*(eventSize+eventDataSize)
	perSessionObjects := int64(4 + 2*eventsPerSession)
	mapSlot := int64(unsafe.Sizeof("")) + ptrSize

	facts := dump.NewFacts()
	facts["sessions"] = numSessions
	facts["payload_size"] = payloadSize
	facts["events_per_session"] = eventsPerSession
	facts["event_data_size"] = eventDataSize
	facts["conns"] = numConns
	facts["conn_buf_size"] = connBufSize
	facts["janitor_buf_size"] = scratchSize
	facts["janitor_function"] = "main.janitor"
	facts["expected_wait_reason"] = "chan receive"
	facts["sizeof_main.Session"] = sessSize
	facts["sizeof_main.Event"] = eventSize
	facts["sizeof_main.Conn"] = connSize
	facts["addr_main.sessions"] = dump.Addr(unsafe.Pointer(&sessions))
	facts["addr_main.pool"] = dump.Addr(unsafe.Pointer(&pool))
	facts["ptr_janitor.scratch"] = uint64(janitorScratch)

	facts["kept_objects_main.sessions"] = 1 + numSessions*perSessionObjects
	facts["kept_bytes_main.sessions"] = numSessions * (perSession + mapSlot)
	facts["kept_objects_main.pool"] = int64(1 + 3*numConns)
	facts["kept_bytes_main.pool"] = numConns*ptrSize + numConns*(connSize+2*connBufSize)
	facts["kept_objects_janitor"] = 1
	facts["kept_bytes_janitor"] = scratchSize
	facts["kept_objects"] = facts["kept_objects_main.sessions"].(int64) +
		facts["kept_objects_main.pool"].(int64) + 1
	facts["kept_bytes"] = facts["kept_bytes_main.sessions"].(int64) +
		facts["kept_bytes_main.pool"].(int64) + scratchSize

	dump.Write(path)
	runtime.KeepAlive(sessions)
	runtime.KeepAlive(pool)
	runtime.KeepAlive(work)
	facts.Print()
}
