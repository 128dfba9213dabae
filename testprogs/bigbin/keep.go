// SPDX-License-Identifier: Apache-2.0

package main

// keep references the entry points of much of the standard library so that the
// linker keeps them, their callees and their types: the binary's DWARF then has
// the size of a real service's (tens of MB of binary, a few hundred thousand
// DIEs). Every package here exists in Go 1.19 (go.mod's version). text/template
// calls reflect's MethodByName with computed names, which makes the linker keep
// every exported method of every type that reaches an interface, so a pointer to
// a package's main type brings in its whole method set.

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/bzip2"
	"compress/flate"
	"compress/gzip"
	"compress/lzw"
	"compress/zlib"
	"container/heap"
	"container/list"
	"container/ring"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/dsa"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/rc4"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"database/sql/driver"
	"debug/buildinfo"
	"debug/dwarf"
	"debug/elf"
	"debug/gosym"
	"debug/macho"
	"debug/pe"
	"debug/plan9obj"
	"encoding/ascii85"
	"encoding/asn1"
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"encoding/csv"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"expvar"
	"go/ast"
	"go/build"
	"go/build/constraint"
	"go/constant"
	"go/doc"
	"go/format"
	"go/importer"
	"go/parser"
	"go/printer"
	"go/scanner"
	"go/token"
	"go/types"
	"hash/adler32"
	"hash/crc32"
	"hash/crc64"
	"hash/fnv"
	"hash/maphash"
	htmlpkg "html"
	"html/template"
	"image"
	"image/color/palette"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"index/suffixarray"
	"io/fs"
	"log"
	"math/big"
	"math/cmplx"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/cookiejar"
	"net/http/fcgi"
	"net/http/httptest"
	"net/http/httptrace"
	"net/http/httputil"
	"net/http/pprof"
	"net/mail"
	"net/netip"
	"net/rpc"
	"net/rpc/jsonrpc"
	"net/smtp"
	"net/textproto"
	"net/url"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	runtimepprof "runtime/pprof"
	"runtime/trace"
	"sort"
	"strconv"
	"testing/fstest"
	"testing/iotest"
	"testing/quick"
	textscanner "text/scanner"
	"text/tabwriter"
	texttemplate "text/template"
	"text/template/parse"
	"time"
	"unicode/utf16"
)

var keep = []interface{}{
	// archives and compression
	tar.NewReader, tar.NewWriter, (*tar.Header)(nil), tar.FileInfoHeader,
	zip.NewReader, zip.NewWriter, zip.OpenReader, (*zip.File)(nil),
	bzip2.NewReader, flate.NewReader, flate.NewWriter, flate.NewWriterDict,
	gzip.NewReader, gzip.NewWriterLevel, lzw.NewReader, lzw.NewWriter,
	zlib.NewReader, zlib.NewWriterLevelDict,
	// containers
	heap.Init, heap.Push, heap.Pop, heap.Fix, list.New, ring.New,
	// crypto
	aes.NewCipher, cipher.NewGCM, cipher.NewCBCEncrypter, cipher.NewCBCDecrypter,
	cipher.NewCTR, cipher.NewCFBEncrypter, cipher.NewOFB, des.NewCipher,
	des.NewTripleDESCipher, dsa.GenerateKey, dsa.Sign, dsa.Verify,
	ecdsa.GenerateKey, ecdsa.SignASN1, ecdsa.VerifyASN1, ed25519.GenerateKey,
	ed25519.Sign, ed25519.Verify, elliptic.P224, elliptic.P256, elliptic.P384,
	elliptic.P521, elliptic.Marshal, hmac.New, hmac.Equal, md5.New, rand.Int,
	rand.Prime, rc4.NewCipher, rsa.GenerateKey, rsa.SignPSS, rsa.VerifyPSS,
	rsa.EncryptOAEP, rsa.DecryptOAEP, rsa.SignPKCS1v15, sha1.New, sha256.New,
	sha256.New224, sha512.New, sha512.New384, tls.Dial, tls.Listen,
	tls.LoadX509KeyPair, tls.X509KeyPair, tls.Client, tls.Server, (*tls.Conn)(nil),
	x509.ParseCertificate, x509.ParseCertificates, x509.CreateCertificate,
	x509.CreateCertificateRequest, x509.ParseCRL, x509.MarshalPKCS8PrivateKey,
	x509.ParsePKCS8PrivateKey, x509.ParsePKIXPublicKey, x509.SystemCertPool,
	(*x509.Certificate)(nil), (*pkix.Name)(nil),
	// databases
	sql.Open, sql.OpenDB, (*sql.DB)(nil), (*sql.Tx)(nil), (*sql.Rows)(nil),
	(*sql.NullString)(nil), driver.IsValue, driver.IsScanValue,
	// debug formats
	buildinfo.ReadFile, dwarf.New, (*dwarf.Data)(nil), (*dwarf.Reader)(nil),
	elf.Open, elf.NewFile, (*elf.File)(nil), gosym.NewTable, gosym.NewLineTable,
	macho.Open, macho.OpenFat, (*macho.File)(nil), pe.Open, (*pe.File)(nil),
	plan9obj.Open,
	// encodings
	ascii85.NewEncoder, ascii85.NewDecoder, asn1.Marshal, asn1.Unmarshal,
	base32.NewEncoder, base64.NewEncoder, base64.NewDecoder, binary.Read,
	binary.Write, binary.PutUvarint, csv.NewReader, csv.NewWriter, gob.NewEncoder,
	gob.NewDecoder, gob.Register, hex.Dump, hex.NewDecoder, json.Marshal,
	json.MarshalIndent, json.Unmarshal, json.NewDecoder, json.Indent, json.Compact,
	pem.Decode, pem.Encode, xml.Marshal, xml.Unmarshal, xml.NewDecoder,
	xml.EscapeText,
	// expvar
	expvar.NewMap, expvar.NewInt, expvar.Publish, expvar.Handler,
	// go/...
	ast.Inspect, ast.Walk, ast.Print, ast.NewCommentMap, ast.FileExports,
	build.Import, build.ImportDir, (*build.Context)(nil), constraint.Parse,
	constant.MakeFromLiteral, constant.BinaryOp, constant.Compare, doc.New,
	doc.NewFromFiles, doc.Synopsis, format.Source, format.Node, importer.Default,
	importer.ForCompiler, parser.ParseFile, parser.ParseDir, parser.ParseExpr,
	printer.Fprint, (*printer.Config)(nil), scanner.PrintError, (*scanner.Scanner)(nil),
	token.NewFileSet, token.Lookup, types.NewPackage, types.NewChecker, types.Eval,
	types.ExprString, types.TypeString, types.Identical, types.AssignableTo,
	types.NewMethodSet, types.LookupFieldOrMethod, types.DefPredeclaredTestFuncs,
	(*types.Config)(nil), (*types.Info)(nil), (*types.Checker)(nil),
	(*types.Named)(nil), (*types.Signature)(nil), (*types.Struct)(nil),
	(*types.Interface)(nil), (*types.Scope)(nil), (*types.Func)(nil),
	// hashes
	adler32.New, crc32.NewIEEE, crc32.MakeTable, crc64.New, fnv.New32a, fnv.New64a,
	fnv.New128, (*maphash.Hash)(nil),
	// html and templates
	htmlpkg.EscapeString, htmlpkg.UnescapeString, template.New, template.ParseFiles,
	template.HTMLEscapeString, template.JSEscapeString, texttemplate.New,
	texttemplate.ParseGlob, parse.Parse, parse.New,
	// images
	image.Decode, image.DecodeConfig, image.NewRGBA, image.NewNRGBA, image.NewGray,
	image.NewPaletted, image.NewYCbCr, palette.Plan9, draw.Draw, draw.DrawMask,
	draw.FloydSteinberg, gif.Decode, gif.DecodeAll, gif.Encode, gif.EncodeAll,
	jpeg.Decode, jpeg.Encode, png.Decode, png.Encode, (*png.Encoder)(nil),
	// indexes, io, logs, maths
	suffixarray.New, (*suffixarray.Index)(nil), fs.WalkDir, fs.Glob, fs.ReadFile,
	log.New, log.Printf, big.NewInt, big.NewFloat, big.NewRat, (*big.Int)(nil),
	(*big.Float)(nil), (*big.Rat)(nil), cmplx.Sqrt, cmplx.Pow, cmplx.Exp,
	// mime and net
	mime.TypeByExtension, mime.ParseMediaType, mime.FormatMediaType,
	multipart.NewReader, multipart.NewWriter, quotedprintable.NewReader,
	quotedprintable.NewWriter, net.Dial, net.Listen, net.ListenUDP, net.LookupHost,
	net.LookupMX, net.LookupSRV, net.ParseCIDR, net.Pipe, (*net.Resolver)(nil),
	(*net.Dialer)(nil), (*net.TCPConn)(nil), (*net.UDPConn)(nil), (*net.UnixConn)(nil),
	http.ListenAndServe, http.ListenAndServeTLS, http.Get, http.Post,
	http.NewRequestWithContext, http.ReadRequest, http.ReadResponse, http.FileServer,
	http.StripPrefix, http.TimeoutHandler, http.MaxBytesReader, (*http.Server)(nil),
	(*http.Transport)(nil), (*http.ServeMux)(nil), (*http.Cookie)(nil),
	cgi.Serve, (*cgi.Handler)(nil), cookiejar.New, fcgi.Serve, httptest.NewServer,
	httptest.NewTLSServer, httptest.NewRecorder, httptest.NewRequest,
	httptrace.WithClientTrace, httputil.NewSingleHostReverseProxy, httputil.DumpRequest,
	httputil.DumpResponse, httputil.NewChunkedReader, pprof.Index, pprof.Profile,
	pprof.Symbol, pprof.Trace, mail.ReadMessage, mail.ParseAddress,
	mail.ParseAddressList, netip.ParseAddr, netip.ParsePrefix, netip.ParseAddrPort,
	rpc.NewServer, rpc.Dial, rpc.DialHTTP, rpc.NewClient, (*rpc.Server)(nil),
	jsonrpc.NewClient, jsonrpc.ServeConn, jsonrpc.Dial, smtp.Dial, smtp.SendMail,
	smtp.NewClient, smtp.PlainAuth, smtp.CRAMMD5Auth, textproto.NewReader,
	textproto.NewWriter, textproto.Dial, url.Parse, url.ParseQuery, url.PathEscape,
	// os, regexp, runtime, sort, strconv
	exec.Command, exec.CommandContext, exec.LookPath, signal.Notify, signal.NotifyContext,
	filepath.Walk, filepath.WalkDir, filepath.Glob, filepath.Rel, filepath.EvalSymlinks,
	regexp.Compile, regexp.MustCompilePOSIX, syntax.Parse, syntax.Compile,
	runtimepprof.Lookup, runtimepprof.StartCPUProfile, trace.Start, trace.Stop, trace.NewTask, sort.Sort, sort.Stable,
	sort.SearchInts, strconv.Quote, strconv.ParseFloat, strconv.FormatFloat,
	strconv.AppendQuoteToASCII,
	// testing helpers, text, time, unicode
	fstest.TestFS, (fstest.MapFS)(nil), iotest.TestReader, iotest.OneByteReader,
	quick.Check, quick.CheckEqual, quick.Value, (*scanner.ErrorList)(nil),
	(*textscanner.Scanner)(nil), tabwriter.NewWriter, time.LoadLocation, time.Parse,
	time.ParseDuration, time.NewTicker, time.AfterFunc, utf16.Encode, utf16.Decode,
	bufio.NewScanner, bufio.NewReadWriter,
}
