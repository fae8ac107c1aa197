import Testing
@testable import HTTPCore

/// Feeds `text` to a parser in pieces cut at `cuts` and collects what it returns.
private func parse(_ text: String, limits: HTTPLimits = HTTPLimits(), cuts: [Int] = []) throws(RequestParseError) -> [RequestHead] {
    let bytes = Array(text.utf8)
    var parser = RequestParser(limits: limits)
    var requests: [RequestHead] = []
    var from = 0
    for cut in cuts + [bytes.count] where cut >= from {
        parser.append(Array(bytes[from..<cut]))
        from = cut
        while true {
            let progress = try parser.next()
            if case .complete(let head) = progress {
                requests.append(head)
                continue
            }
            if case .headComplete = progress { continue }
            break
        }
    }
    return requests
}

/// Parses `text` whole and cut at every byte position; all must agree.
private func parseSplitEverywhere(_ text: String, limits: HTTPLimits = HTTPLimits()) throws -> [RequestHead] {
    let whole = try parse(text, limits: limits)
    for cut in 0...text.utf8.count {
        let pieces = try parse(text, limits: limits, cuts: [cut])
        #expect(pieces.count == whole.count, "cut at \(cut)")
        for (a, b) in zip(pieces, whole) {
            #expect(a.request.method == b.request.method && a.request.target == b.request.target
                    && a.request.body == b.request.body && a.request.headers == b.request.headers, "cut at \(cut)")
        }
    }
    return whole
}

private func parseError(_ text: String, limits: HTTPLimits = HTTPLimits()) -> RequestParseError? {
    do {
        _ = try parse(text, limits: limits)
        return nil
    } catch {
        return error
    }
}

@Suite("RequestParser")
struct RequestParserTests {
    @Test func parsesAGetRequest() throws {
        let requests = try parseSplitEverywhere("GET /v1/a?limit=5 HTTP/1.1\r\nHost: x\r\nAccept:  */*  \r\n\r\n")
        #expect(requests.count == 1)
        let request = try #require(requests.first).request
        #expect(request.method == .get)
        #expect(request.target == "/v1/a?limit=5")
        #expect(request.path == "/v1/a")
        #expect(request.version == .http1_1)
        #expect(request.headers["host"] == "x")
        #expect(request.headers["Accept"] == "*/*")
        #expect(request.body.isEmpty)
        #expect(requests[0].keepAlive)
    }

    @Test func parsesAContentLengthBodySplitAnywhere() throws {
        let requests = try parseSplitEverywhere("POST /m HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world")
        #expect(requests.map { String(decoding: $0.request.body, as: UTF8.self) } == ["hello world"])
    }

    @Test func parsesAChunkedBodySplitAnywhere() throws {
        let text = "POST /m HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5\r\nhello\r\n6;name=value\r\n world\r\nA \r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n"
        let requests = try parseSplitEverywhere(text)
        #expect(requests.map { String(decoding: $0.request.body, as: UTF8.self) } == ["hello world0123456789"])
    }

    @Test func takesPipelinedRequestsOneByOne() throws {
        let text = "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nPOST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nokGET /3 HTTP/1.1\r\nHost: h\r\n\r\n"
        let requests = try parseSplitEverywhere(text)
        #expect(requests.map(\.request.target) == ["/1", "/2", "/3"])
        #expect(requests[1].request.body == Array("ok".utf8))
    }

    @Test func reportsTheHeadBeforeTheBody() throws {
        var parser = RequestParser(limits: HTTPLimits())
        parser.append(Array("PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n".utf8))
        guard case .headComplete(let head) = try parser.next() else {
            Issue.record("expected the head")
            return
        }
        #expect(head.expectsContinue)
        #expect(parser.isReadingBody)
        guard case .needMore = try parser.next() else {
            Issue.record("expected needMore")
            return
        }
        parser.append(Array("abc".utf8))
        guard case .complete(let complete) = try parser.next() else {
            Issue.record("expected the request")
            return
        }
        #expect(complete.request.body == Array("abc".utf8))
        #expect(!parser.hasPartialRequest)
    }

    @Test func acceptsBareLFAndLeadingEmptyLines() throws {
        let requests = try parseSplitEverywhere("\r\n\nGET /a HTTP/1.1\nHost: x\n\n")
        #expect(requests.map(\.request.target) == ["/a"])
        #expect(requests.first?.request.headers["Host"] == "x")
    }

    @Test(arguments: [
        ("GET http://example.com/a/b?c=d HTTP/1.1\r\nHost: h\r\n\r\n", "/a/b?c=d"),
        ("GET HTTP://example.com HTTP/1.1\r\nHost: h\r\n\r\n", "/"),
        ("GET https://example.com:8443?x=1 HTTP/1.1\r\nHost: h\r\n\r\n", "/?x=1"),
        ("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", "*"),
    ])
    func reducesTargets(text: String, target: String) throws {
        #expect(try parse(text).first?.request.target == target)
    }

    @Test func emptyBodyWithoutFraming() throws {
        let requests = try parse("POST /m HTTP/1.1\r\nHost: h\r\n\r\nGET /n HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(requests.map(\.request.target) == ["/m", "/n"])
        #expect(requests[0].request.body.isEmpty)
    }

    @Test func contentLengthListsOfEqualValuesAreOneLength() throws {
        let requests = try parse("POST /m HTTP/1.1\r\nHost: h\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nok")
        #expect(requests.first?.request.body == Array("ok".utf8))
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: h\r\n\r\n", true),
        ("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false),
        ("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, CLOSE\r\n\r\n", false),
        ("GET / HTTP/1.0\r\n\r\n", false),
        ("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
        ("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", false),
    ])
    func decidesKeepAlive(text: String, keepAlive: Bool) throws {
        #expect(try parse(text).first?.keepAlive == keepAlive)
    }

    /// RFC 9110 §2.5: a later minor version is served as the highest implemented.
    /// RFC 9112 §3.2: HTTP/1.1 needs `Host`; HTTP/1.0 may leave it out.
    /// In absolute form the target's authority is the `Host` (§3.2.2).
    @Test func hostIsRequiredAndAbsoluteFormNamesIt() throws {
        #expect(parseError("GET / HTTP/1.1\r\n\r\n") == .missingHost)
        #expect(try parse("GET / HTTP/1.0\r\n\r\n").first?.request.headers["Host"] == nil)
        let absolute = try parse("GET http://evil.example:81/a?b HTTP/1.1\r\nHost: localhost\r\n\r\n").first?.request
        #expect(absolute?.target == "/a?b")
        #expect(absolute?.headers.values(of: "Host") == ["evil.example:81"])
        let oldAbsolute = try parse("GET http://evil.example/ HTTP/1.0\r\n\r\n").first?.request
        #expect(oldAbsolute?.headers.values(of: "Host") == ["evil.example"])
        #expect(parseError("GET http://user@evil.example/ HTTP/1.1\r\nHost: x\r\n\r\n") == .invalidTarget)
    }

    @Test func laterHTTP1MinorVersionsAreServedAsHTTP11() throws {
        for minor in 2...9 {
            let requests = try parse("GET / HTTP/1.\(minor)\r\nHost: h\r\n\r\n")
            #expect(requests.first?.request.version == .http1_1)
            #expect(requests.first?.keepAlive == true)
        }
    }

    /// A TLS handshake or binary noise is refused from its first bytes, not
    /// after the head timeout; a method still arriving is waited for.
    @Test func bytesThatCannotStartARequestAreRefusedBeforeTheHeadEnds() throws {
        #expect(parseError("\u{16}\u{3}\u{1}") == .invalidMethod)
        #expect(parseError("\u{0}\u{0}") == .invalidMethod)
        #expect(parseError("GE\u{0}") == .invalidMethod)
        #expect(try parse("GE").isEmpty)
        #expect(try parse("GET /partial HTTP/1.1\r\nHost: x").isEmpty)
        #expect(try parse("HELLO\r\n").isEmpty)  // the whole head says what is wrong
    }

    /// What the access log names for a head refused before it was whole:
    /// a request line that parses, and nothing for one that does not.
    @Test(arguments: [
        ("GET /a?b=1 HTTP/1.1\r\nHost: h\r\nX-Big: 1", "GET", "/a?b=1"),
        ("\r\nPOST /v1 HTTP/1.0\n", "POST", "/v1"),
        ("NOT A REQUEST\r\n\r\n", nil, nil),
        ("GET /a\r\n", nil, nil),
        ("GET /a HTTP/1.1", nil, nil),
        ("GET  HTTP/1.1\r\nHost: h\r\n", nil, nil),
    ] as [(String, String?, String?)])
    func bufferedRequestLineNamesOnlyALineThatParses(text: String, method: String?, target: String?) {
        var parser = RequestParser(limits: HTTPLimits())
        parser.append(Array(text.utf8))
        let line = parser.bufferedRequestLine
        #expect(line?.method == method && line?.target == target, "\(String(describing: line))")
    }

    @Test func continueOnlyForHTTP11() throws {
        let old = try parse("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx")
        #expect(old.first?.expectsContinue == false)
    }

    @Test(arguments: [
        ("HELLO\r\n\r\n", RequestParseError.invalidRequestLine),
        ("GET /\r\n\r\n", .invalidRequestLine),
        ("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", .invalidRequestLine),
        (" GET / HTTP/1.1\r\nHost: h\r\n\r\n", .invalidRequestLine),
        ("G@T / HTTP/1.1\r\nHost: h\r\n\r\n", .invalidMethod),
        ("GET / HTTP/2.0\r\n\r\n", .unsupportedVersion),
        ("GET / HTTP/0.9\r\n\r\n", .unsupportedVersion),
        ("GET / HTTX/1.1\r\n\r\n", .invalidVersion),
        ("GET / HTTP/1.10\r\n\r\n", .invalidVersion),
        ("GET / http/1.1\r\n\r\n", .invalidVersion),
        ("GET / HTTP/1.1 \r\n\r\n", .invalidVersion),
        ("GET foo HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET * HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET /a#b HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("CONNECT example.com:443 HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET /\u{e9} HTTP/1.1\r\nHost: h\r\n\r\n", .invalidTarget),
        ("GET /\r HTTP/1.1\r\n\r\n", .bareCarriageReturn),
        ("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", .duplicateHost),
        ("GET / HTTP/1.1\r\nHost : x\r\n\r\n", .invalidHeaderName),
        ("GET / HTTP/1.1\r\nHost: h\r\n: x\r\n\r\n", .invalidHeaderName),
        ("GET / HTTP/1.1\r\nHost: h\r\nHo(st: x\r\n\r\n", .invalidHeaderName),
        ("GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", .invalidHeaderLine),
        ("GET / HTTP/1.1\r\nHost: h\r\nA: b\r\n folded\r\n\r\n", .obsoleteLineFolding),
        ("GET / HTTP/1.1\r\nHost: h\r\nA: b\u{0}c\r\n\r\n", .invalidHeaderValue),
        ("GET / HTTP/1.1\r\nHost: h\r\nA: b\rc\r\n\r\n", .invalidHeaderValue),
        ("GET / HTTP/1.1\r\nHost: h\r\nA: b\u{7f}\r\n\r\n", .invalidHeaderValue),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n", .invalidContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", .invalidContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\n", .invalidContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1 2\r\n\r\n", .invalidContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n", .invalidContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n", .invalidContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", .invalidContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1, 2\r\n\r\n", .invalidContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n", .contentLengthWithTransferEncoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", .invalidTransferEncoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, identity\r\n\r\n", .invalidTransferEncoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\n\r\n", .invalidTransferEncoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n", .invalidTransferEncoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", .unsupportedTransferEncoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", .invalidTransferEncoding),
        ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", .invalidTransferEncoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nExpect: the-unexpected\r\n\r\n", .unsupportedExpectation),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", .invalidChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", .invalidChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX", .invalidChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n", .invalidChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n", .invalidChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n bad trailer\r\n\r\n", .invalidChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nnocolon\r\n\r\n", .invalidChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T : 1\r\n\r\n", .invalidChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n: empty name\r\n\r\n", .invalidChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nGET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n", .invalidChunkedBody),
    ])
    func refusesMalformedRequests(text: String, error: RequestParseError) {
        #expect(parseError(text) == error)
    }

    @Test func refusesAHeadThatNeverEnds() throws {
        let limits = HTTPLimits(maximumHeadBytes: 1024)
        var parser = RequestParser(limits: limits)
        parser.append(Array("GET / HTTP/1.1\r\nHost: h\r\n".utf8))
        var error: RequestParseError? = nil
        for _ in 0..<100 where error == nil {
            parser.append(Array("X-Filler: 0123456789".utf8))  // one endless line, no CRLF
            do { _ = try parser.next() } catch let thrown { error = thrown }
        }
        #expect(error == .headTooLarge)
        #expect(parser.bufferedByteCount < 1024 + 64)
    }

    @Test func headAtTheLimitIsAcceptedAndOneByteMoreIsNot() throws {
        let limits = HTTPLimits(maximumHeadBytes: 100)
        let prefix = "GET / HTTP/1.1\r\nHost: h\r\nX: "
        let fill = String(repeating: "a", count: 100 - prefix.utf8.count - 4)
        #expect(try parse(prefix + fill + "\r\n\r\n", limits: limits).count == 1)
        #expect(parseError(prefix + fill + "a\r\n\r\n", limits: limits) == .headTooLarge)
    }

    @Test func refusesADeclaredBodyOverTheLimitBeforeItArrives() {
        let limits = HTTPLimits(maximumBodyBytes: 10)
        #expect(parseError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n", limits: limits) == .bodyTooLarge)
        #expect((try? parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789", limits: limits))?.count == 1)
    }

    @Test func refusesADecodedChunkedBodyOverTheLimit() {
        let limits = HTTPLimits(maximumBodyBytes: 10)
        let text = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n5\r\n"
        #expect(parseError(text, limits: limits) == .bodyTooLarge)
    }

    @Test func refusesEndlessChunkFraming() {
        let limits = HTTPLimits(maximumHeadBytes: 256, maximumBodyBytes: 256)
        let text = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + String(repeating: "1;e=xxxxxxx\r\na\r\n", count: 40)
        #expect(parseError(text, limits: limits) == .bodyTooLarge)
    }

    @Test func errorsMapToTheirStatus() {
        #expect(RequestParseError.unsupportedVersion.status.code == 505)
        #expect(RequestParseError.headTooLarge.status.code == 431)
        #expect(RequestParseError.bodyTooLarge.status.code == 413)
        #expect(RequestParseError.unsupportedTransferEncoding.status.code == 501)
        #expect(RequestParseError.unsupportedExpectation.status.code == 417)
        #expect(RequestParseError.requestTimeout.status.code == 408)
        #expect(RequestParseError.invalidHeaderName.status.code == 400)
    }
}
