/// A request head and what the connection needs to know about it.
public struct RequestHead: Sendable {
    /// The request; `body` is empty until the whole body has arrived.
    public var request: HTTPRequest
    /// Whether the connection may carry another request after this one
    /// (HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`).
    public var keepAlive: Bool
    /// `Expect: 100-continue` on an HTTP/1.1 request (RFC 9110 §10.1.1: never
    /// answered with 100 for HTTP/1.0).
    public var expectsContinue: Bool
    /// How the body is delimited, as the head declared it.
    var framing: BodyFraming
}

/// How a request body is delimited (RFC 9112 §6.3).
enum BodyFraming: Sendable {
    case none
    case length(Int)
    case chunked
}

/// Turns the bytes of a connection into requests, one at a time, as they
/// arrive (RFC 9112). It works on bytes and makes Strings only for the
/// values a request carries.
///
/// ```swift
/// var parser = RequestParser(limits: HTTPLimits())
/// parser.append(bytes)
/// switch try parser.next() {
/// case .needMore: break                      // read more
/// case .headComplete(let head): break        // body still to come: maybe send 100 Continue
/// case .complete(let head): break            // hand head.request to the responder
/// }
/// ```
///
/// Pipelined requests stay in the buffer until `next()` is called again, so
/// a connection takes them one by one. After an error the parser is
/// unusable: the framing can no longer be trusted and the connection closes.
///
/// Choices where RFC 9112 lets the recipient pick: a bare LF ends a head line
/// (§2.2), empty lines before the request line are skipped (§2.2), a
/// Content-Length list of equal values is one length (RFC 9110 §8.6), a POST
/// without length or chunked has an empty body (§6.3), a later HTTP/1.x is
/// served as HTTP/1.1 (RFC 9110 §2.5). Host follows RFC 9112 §3.2: an
/// HTTP/1.1 request without one, or with two, is refused (400); HTTP/1.0
/// may leave it out. In absolute form (§3.2.2) the target's authority
/// replaces any Host field sent, so what the server checks and sees as
/// `Host` is the name the request really targets.
public struct RequestParser: Sendable {
    public enum Progress: Sendable {
        /// The buffer holds no complete head, or not all of the body yet.
        case needMore
        /// The head is complete and a body is still to come (returned once per request).
        case headComplete(RequestHead)
        /// A whole request.
        case complete(RequestHead)
    }

    private enum State: Sendable {
        case head
        case fixedBody(RequestHead, length: Int)
        case chunkedBody(RequestHead, ChunkedBodyDecoder, body: [UInt8])
    }

    public let limits: HTTPLimits
    private var buffer: [UInt8] = []
    /// Bytes before `start` are consumed.
    private var start = 0
    /// Where the search for the end of the head resumes.
    private var scanned = 0
    private var state = State.head

    public init(limits: HTTPLimits) {
        self.limits = limits
    }

    /// Bytes received but not yet consumed by a complete request.
    public var bufferedByteCount: Int { buffer.count - start }

    /// True when a request has begun but is not complete: the head timeout
    /// (or the body timeout) is running.
    public var hasPartialRequest: Bool {
        if case .head = state { return buffer.count > start }
        return true
    }

    /// True while the body of a request whose head was returned is awaited.
    public var isReadingBody: Bool {
        if case .head = state { return false }
        return true
    }

    /// Method and target of the request line at the front of the buffer,
    /// once that line has ended: what the access log names for a request
    /// refused before its head was complete (431, a 413 by Content-Length,
    /// a bad field, a head timeout). Nil when no whole line is there or it
    /// is not a method, a target and an `HTTP/` version: a line that does
    /// not parse names nothing (the log writes `-`).
    public var bufferedRequestLine: (method: String, target: String)? {
        buffer.withUnsafeBufferPointer { bytes -> (method: String, target: String)? in
            var index = start
            while index < bytes.count, bytes[index] == HTTPSyntax.cr || bytes[index] == HTTPSyntax.lf { index += 1 }
            let methodStart = index
            while index < bytes.count, HTTPSyntax.isTokenByte(bytes[index]) { index += 1 }
            guard index > methodStart, index < bytes.count, bytes[index] == HTTPSyntax.space else { return nil }
            let method = methodStart..<index
            index += 1
            let targetStart = index
            while index < bytes.count, bytes[index] > HTTPSyntax.space, bytes[index] != 0x7F { index += 1 }
            let target = targetStart..<index
            let version = Array(" HTTP/".utf8)
            guard !target.isEmpty, index + version.count <= bytes.count,
                  bytes[index..<(index + version.count)].elementsEqual(version),
                  bytes[index...].contains(HTTPSyntax.lf) else { return nil }
            return (HTTPSyntax.string(bytes, method), HTTPSyntax.string(bytes, target))
        }
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Drops consumed bytes: all of them cheaply when nothing is pending,
    /// otherwise once they are the larger part of a sizeable buffer.
    private mutating func compact() {
        if start == 0 { return }
        if start == buffer.count {
            // An idle keep-alive connection should not sit on a large buffer.
            if buffer.capacity > 16 * 1024 { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
            scanned = 0
            start = 0
        } else if start >= 4096 && start * 2 >= buffer.count {
            buffer.removeSubrange(0..<start)
            scanned -= start
            start = 0
        }
    }

    /// Parses as far as the buffer allows.
    /// - Throws: `RequestParseError` for bytes that cannot be a request or break a limit.
    public mutating func next() throws(RequestParseError) -> Progress {
        switch state {
        case .head:
            guard let head = try parseHeadIfComplete() else { return .needMore }
            return try startBody(of: head)
        case .fixedBody(let head, let length):
            return takeFixedBody(head, length: length) ?? .needMore
        case .chunkedBody(let head, var decoder, var body):
            state = .head  // drop the references so `body` is uniquely owned
            try decodeChunks(&decoder, into: &body)
            if decoder.isComplete {
                var complete = head
                complete.request.body = body
                return .complete(complete)
            }
            state = .chunkedBody(head, decoder, body: body)
            return .needMore
        }
    }

    private mutating func startBody(of head: RequestHead) throws(RequestParseError) -> Progress {
        switch head.framing {
        case .none:
            return .complete(head)
        case .length(let length):
            if let complete = takeFixedBody(head, length: length) { return complete }
            state = .fixedBody(head, length: length)
            return .headComplete(head)
        case .chunked:
            var decoder = ChunkedBodyDecoder(maximumBodyBytes: limits.maximumBodyBytes,
                                             maximumFramingBytes: max(limits.maximumBodyBytes, limits.maximumHeadBytes),
                                             maximumTrailerBytes: limits.maximumHeadBytes)
            var body: [UInt8] = []
            try decodeChunks(&decoder, into: &body)
            if decoder.isComplete {
                var complete = head
                complete.request.body = body
                return .complete(complete)
            }
            state = .chunkedBody(head, decoder, body: body)
            return .headComplete(head)
        }
    }

    private mutating func takeFixedBody(_ head: RequestHead, length: Int) -> Progress? {
        guard buffer.count - start >= length else { return nil }
        var complete = head
        complete.request.body = Array(buffer[start..<(start + length)])
        start += length
        scanned = start
        state = .head
        return .complete(complete)
    }

    private mutating func decodeChunks(_ decoder: inout ChunkedBodyDecoder, into body: inout [UInt8]) throws(RequestParseError) {
        let end = buffer.count
        let from = start
        let consumed = try buffer.withUnsafeBufferPointer { (bytes) throws(RequestParseError) -> Int in
            try decoder.decode(bytes, from: from, to: end, into: &body)
        }
        start = consumed
        scanned = consumed
        if decoder.isComplete { state = .head }
    }

    // MARK: - Head

    /// Finds the end of the head (an empty line) and parses it; nil while it
    /// is incomplete. The size limit is checked on the incomplete head too,
    /// so a head that never ends is refused at `maximumHeadBytes`.
    private mutating func parseHeadIfComplete() throws(RequestParseError) -> RequestHead? {
        let limits = self.limits
        var start = self.start
        var scanned = self.scanned
        defer {
            self.start = start
            self.scanned = scanned
        }
        return try buffer.withUnsafeBufferPointer { (bytes) throws(RequestParseError) -> RequestHead? in
            let end = bytes.count
            // RFC 9112 §2.2: ignore empty lines received before the request line.
            while start < end {
                if bytes[start] == HTTPSyntax.lf {
                    start += 1
                } else if bytes[start] == HTTPSyntax.cr {
                    guard start + 1 < end else { return nil }
                    guard bytes[start + 1] == HTTPSyntax.lf else { break }
                    start += 2
                } else {
                    break
                }
            }
            guard let headEnd = try HTTPSyntax.findHeadEnd(bytes, start: start, scanned: &scanned,
                                                           limit: limits.maximumHeadBytes) else {
                try Self.checkMethodPrefix(bytes, from: start)
                return nil
            }
            let head = try Self.parseHead(bytes, start..<headEnd, limits: limits)
            start = headEnd
            scanned = headEnd
            return head
        }
    }

    /// Bytes that cannot begin a request line (a TLS handshake, binary
    /// noise) are refused as they arrive, not after the head timeout. Only
    /// the first bytes are looked at, so a head trickling in byte by byte
    /// costs no more than a constant each time.
    private static func checkMethodPrefix(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) throws(RequestParseError) {
        let end = min(bytes.count, start + 32)
        var index = start
        while index < end {
            let byte = bytes[index]
            // The request line's own checks name what is wrong past here.
            if byte == HTTPSyntax.space || byte == HTTPSyntax.cr || byte == HTTPSyntax.lf { return }
            guard HTTPSyntax.isTokenByte(byte) else { throw .invalidMethod }
            index += 1
        }
    }

    private static func parseHead(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
                                  limits: HTTPLimits) throws(RequestParseError) -> RequestHead {
        let end = range.upperBound
        let (requestLine, firstField) = HTTPSyntax.line(bytes, from: range.lowerBound, end: end)
        let (method, target, authority, version) = try parseRequestLine(bytes, requestLine)

        var position = firstField
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(8)
        var contentLength: Int? = nil
        var sawTransferEncoding = false
        var chunkedCount = 0
        var lastCodingIsChunked = false
        var unknownCoding = false
        var connectionClose = false
        var connectionKeepAlive = false
        var expectsContinue = false
        var sawHost = false

        while true {
            let (field, next) = HTTPSyntax.line(bytes, from: position, end: end)
            position = next
            if field.isEmpty { break }
            if HTTPSyntax.isWhitespace(bytes[field.lowerBound]) { throw .obsoleteLineFolding }
            guard let colon = HTTPSyntax.firstIndex(of: HTTPSyntax.colon, in: bytes, field) else {
                throw .invalidHeaderLine
            }
            let name = field.lowerBound..<colon
            guard !name.isEmpty else { throw .invalidHeaderName }
            for index in name where !HTTPSyntax.isTokenByte(bytes[index]) { throw .invalidHeaderName }
            let value = HTTPSyntax.trimmed(bytes, (colon + 1)..<field.upperBound)
            for index in value where !HTTPSyntax.isFieldValueByte(bytes[index]) { throw .invalidHeaderValue }

            switch name.count {
            case 14 where HTTPSyntax.equalsIgnoringCase(bytes, name, "content-length"):
                try HTTPSyntax.forEachListElement(bytes, value) { (element) throws(RequestParseError) in
                    let length = try parseContentLength(bytes, element)
                    if let contentLength, contentLength != length { throw .invalidContentLength }
                    contentLength = length
                }
            case 17 where HTTPSyntax.equalsIgnoringCase(bytes, name, "transfer-encoding"):
                sawTransferEncoding = true
                try HTTPSyntax.forEachListElement(bytes, value) { (element) throws(RequestParseError) in
                    if element.isEmpty { return }  // RFC 9110 §5.6.1: empty list elements are ignored
                    if HTTPSyntax.equalsIgnoringCase(bytes, element, "chunked") {
                        chunkedCount += 1
                        lastCodingIsChunked = true
                    } else {
                        unknownCoding = true
                        lastCodingIsChunked = false
                    }
                }
            case 10 where HTTPSyntax.equalsIgnoringCase(bytes, name, "connection"):
                try HTTPSyntax.forEachListElement(bytes, value) { element in
                    if HTTPSyntax.equalsIgnoringCase(bytes, element, "close") { connectionClose = true }
                    if HTTPSyntax.equalsIgnoringCase(bytes, element, "keep-alive") { connectionKeepAlive = true }
                }
            case 4 where HTTPSyntax.equalsIgnoringCase(bytes, name, "host"):
                if sawHost { throw .duplicateHost }
                sawHost = true
                if let authority {
                    fields.append(("Host", authority))
                    continue
                }
            case 6 where HTTPSyntax.equalsIgnoringCase(bytes, name, "expect"):
                guard HTTPSyntax.equalsIgnoringCase(bytes, value, "100-continue") else {
                    throw .unsupportedExpectation
                }
                expectsContinue = true
            default:
                break
            }
            fields.append((HTTPSyntax.string(bytes, name), HTTPSyntax.string(bytes, value)))
        }

        if !sawHost {
            guard version == .http1_0 else { throw .missingHost }
            if let authority { fields.append(("Host", authority)) }
        }

        var framing = BodyFraming.none
        if sawTransferEncoding {
            // RFC 9112 §6.1 and §6.3: TE with CL, a TE in HTTP/1.0, or chunked
            // not (once, and) last leave the body length unknowable.
            // Framing first: chunked not (once, and) last is a 400 (MUST),
            // even when a coding we do not know comes with it; 501 is for
            // a known framing with a coding we cannot undo (`gzip, chunked`).
            if contentLength != nil { throw .contentLengthWithTransferEncoding }
            if version == .http1_0 || chunkedCount != 1 || !lastCodingIsChunked { throw .invalidTransferEncoding }
            if unknownCoding { throw .unsupportedTransferEncoding }
            framing = .chunked
        } else if let contentLength {
            if contentLength > limits.maximumBodyBytes { throw .bodyTooLarge }
            if contentLength > 0 { framing = .length(contentLength) }
        }
        let keepAlive = version == .http1_1 ? !connectionClose : (connectionKeepAlive && !connectionClose)
        let request = HTTPRequest(method: HTTPMethod(rawValue: method), target: target, version: version,
                                  headers: HTTPHeaders(fields))
        return RequestHead(request: request, keepAlive: keepAlive,
                           expectsContinue: expectsContinue && version == .http1_1, framing: framing)
    }

    /// `1*DIGIT`, without sign or spaces, refusing overflow.
    private static func parseContentLength(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(RequestParseError) -> Int {
        guard !range.isEmpty else { throw .invalidContentLength }
        var value = 0
        for index in range {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { throw .invalidContentLength }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            if overflow1 || overflow2 { throw .invalidContentLength }
            value = sum
        }
        return value
    }

    // MARK: - Request line

    /// `method SP request-target SP HTTP-version` (RFC 9112 §3).
    /// The authority is the absolute form's `host[:port]`, nil in origin form.
    private static func parseRequestLine(_ bytes: UnsafeBufferPointer<UInt8>, _ line: Range<Int>) throws(RequestParseError) -> (String, String, String?, HTTPVersion) {
        if HTTPSyntax.firstIndex(of: HTTPSyntax.cr, in: bytes, line) != nil { throw .bareCarriageReturn }
        guard let firstSpace = HTTPSyntax.firstIndex(of: HTTPSyntax.space, in: bytes, line) else {
            throw .invalidRequestLine
        }
        let methodRange = line.lowerBound..<firstSpace
        guard !methodRange.isEmpty else { throw .invalidRequestLine }
        for index in methodRange where !HTTPSyntax.isTokenByte(bytes[index]) { throw .invalidMethod }
        guard let secondSpace = HTTPSyntax.firstIndex(of: HTTPSyntax.space, in: bytes, (firstSpace + 1)..<line.upperBound) else {
            throw .invalidRequestLine
        }
        let targetRange = (firstSpace + 1)..<secondSpace
        guard !targetRange.isEmpty else { throw .invalidRequestLine }
        let version = try parseVersion(bytes, (secondSpace + 1)..<line.upperBound)
        let method = HTTPSyntax.string(bytes, methodRange)
        let (target, authority) = try parseTarget(bytes, targetRange, isOptions: method == "OPTIONS")
        return (method, target, authority, version)
    }

    /// `HTTP/DIGIT.DIGIT`: 1.0 and 1.1 are served, a later 1.x as 1.1
    /// (RFC 9110 §2.5: the highest minor version implemented); other major
    /// versions get 505.
    private static func parseVersion(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(RequestParseError) -> HTTPVersion {
        guard range.count == 8 else { throw .invalidVersion }
        let p = range.lowerBound
        guard bytes[p] == UInt8(ascii: "H"), bytes[p + 1] == UInt8(ascii: "T"), bytes[p + 2] == UInt8(ascii: "T"),
              bytes[p + 3] == UInt8(ascii: "P"), bytes[p + 4] == UInt8(ascii: "/"), bytes[p + 6] == UInt8(ascii: "."),
              (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[p + 5]),
              (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[p + 7]) else { throw .invalidVersion }
        let major = Int(bytes[p + 5] - UInt8(ascii: "0")), minor = Int(bytes[p + 7] - UInt8(ascii: "0"))
        guard major == 1 else { throw .unsupportedVersion }
        return minor == 0 ? .http1_0 : .http1_1
    }

    /// Origin-form as is; absolute-form reduced to its path and query
    /// (RFC 9112 §3.2.2), with its authority; `*` only for OPTIONS; anything
    /// else refused, userinfo (`user@host`) included (RFC 9110 §4.2.4).
    private static func parseTarget(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
                                    isOptions: Bool) throws(RequestParseError) -> (target: String, authority: String?) {
        for index in range {
            let byte = bytes[index]
            guard byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "#") else { throw .invalidTarget }
        }
        let first = bytes[range.lowerBound]
        if first == UInt8(ascii: "/") { return (HTTPSyntax.string(bytes, range), nil) }
        if first == UInt8(ascii: "*") {
            guard range.count == 1, isOptions else { throw .invalidTarget }
            return ("*", nil)
        }
        let authorityStart: Int
        if range.count > 7, HTTPSyntax.equalsIgnoringCase(bytes, range.lowerBound..<(range.lowerBound + 7), "http://") {
            authorityStart = range.lowerBound + 7
        } else if range.count > 8, HTTPSyntax.equalsIgnoringCase(bytes, range.lowerBound..<(range.lowerBound + 8), "https://") {
            authorityStart = range.lowerBound + 8
        } else {
            throw .invalidTarget
        }
        var pathStart = authorityStart
        while pathStart < range.upperBound && bytes[pathStart] != UInt8(ascii: "/") && bytes[pathStart] != UInt8(ascii: "?") {
            pathStart += 1
        }
        guard pathStart > authorityStart else { throw .invalidTarget }
        let authorityRange = authorityStart..<pathStart
        guard HTTPSyntax.firstIndex(of: UInt8(ascii: "@"), in: bytes, authorityRange) == nil else { throw .invalidTarget }
        let authority = HTTPSyntax.string(bytes, authorityRange)
        if pathStart == range.upperBound { return ("/", authority) }
        let rest = HTTPSyntax.string(bytes, pathStart..<range.upperBound)
        return (bytes[pathStart] == UInt8(ascii: "?") ? "/" + rest : rest, authority)
    }
}
