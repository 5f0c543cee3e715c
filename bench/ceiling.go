package bench

import (
	"io"
	"math"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// ceilingPropfind is the constant 207 answer to PROPFIND: one response
// with the properties of a file, as small as a real stat reply.
var ceilingPropfind = []byte(`<?xml version="1.0" encoding="utf-8"?>
<D:multistatus xmlns:D="DAV:"><D:response><D:href>/f</D:href><D:propstat><D:prop>` +
	`<D:resourcetype/><D:getcontentlength>0</D:getcontentlength></D:prop>` +
	`<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>
`)

// CeilingHandler answers every request with a constant response and no
// work: 200 with a body of bodySize bytes (Content-Length only for HEAD)
// for GET and HEAD, 207 with a tiny multistatus for PROPFIND, 201 for PUT
// and MKCOL after reading and discarding the body, 204 for anything else.
// Served by fasthttp on a machine, it is the HTTP limit of that machine:
// no storage server written on fasthttp can answer faster.
func CeilingHandler(bodySize int) fasthttp.RequestHandler {
	body := make([]byte, bodySize)
	for i := range body {
		body[i] = 'x'
	}
	return func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Method()) { // no allocation: the compiler compares in place
		case "GET", "HEAD":
			ctx.Response.Header.SetContentTypeBytes(octetStream)
			ctx.Response.SetBodyRaw(body)
		case "PROPFIND":
			discardBody(ctx)
			ctx.SetStatusCode(207)
			ctx.Response.Header.SetContentTypeBytes(xmlType)
			ctx.Response.SetBodyRaw(ceilingPropfind)
		case "PUT", "MKCOL":
			discardBody(ctx)
			ctx.SetStatusCode(201)
		default:
			ctx.SetStatusCode(204)
		}
	}
}

// discardBody reads the request body, if any, as it arrives. Bodyless
// requests skip RequestBodyStream, which allocates a reader.
func discardBody(ctx *fasthttp.RequestCtx) {
	if ctx.Request.Header.ContentLength() == 0 {
		return
	}
	if s := ctx.RequestBodyStream(); s != nil {
		io.Copy(io.Discard, s)
	}
}

var (
	octetStream = []byte("application/octet-stream")
	xmlType     = []byte(`application/xml; charset="utf-8"`)
)

// NewCeilingServer is the fasthttp server `shoal bench ceiling` runs.
func NewCeilingServer(bodySize int) *fasthttp.Server {
	return &fasthttp.Server{
		Handler:                      CeilingHandler(bodySize),
		Name:                         "shoal-ceiling",
		StreamRequestBody:            true, // PUT bodies are discarded as they arrive, never buffered whole
		MaxRequestBodySize:           math.MaxInt,
		ReadTimeout:                  2 * time.Minute,
		IdleTimeout:                  2 * time.Minute,
		NoDefaultContentType:         true,
		DisablePreParseMultipartForm: true,
	}
}

// ServeCeiling serves the ceiling on ln until ln is closed.
func ServeCeiling(ln net.Listener, bodySize int) error {
	return NewCeilingServer(bodySize).Serve(ln)
}
