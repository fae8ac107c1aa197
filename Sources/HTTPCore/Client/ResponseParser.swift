/// Turns the bytes a server sends into responses (RFC 9112 §6.3 framing):
/// Content-Length, chunked, or delimited by the connection closing; none
/// for 1xx, 204, 304 and answers to HEAD. The client side of the wire,
/// shared by the tests and the load tool.
///
/// ```swift
/// var parser = ResponseParser()
/// parser.append(bytes)
/// if let response = try parser.next(answersHead: false) { ... }
/// ```
public struct ResponseParser: Sendable {
    private enum Framing {
        case none
        case length(Int)
        case chunked
        case untilClose
    }

    private enum State: Sendable {
        case head
        case fixedBody(HTTPClientResponse, length: Int)
        case chunkedBody(HTTPClientResponse, ChunkedBodyDecoder)
        case untilClose(HTTPClientResponse)
    }

    /// A head over this is refused (a server would not send one).
    public var maximumHeadBytes: Int
    /// A body over this is refused, so a broken server cannot exhaust memory.
    public var maximumBodyBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var scanned = 0
    private var state = State.head
    private var body: [UInt8] = []

    public init(maximumHeadBytes: Int = 64 * 1024, maximumBodyBytes: Int = 256 * 1024 * 1024) {
        self.maximumHeadBytes = maximumHeadBytes
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// Bytes received and not yet part of a returned response.
    public var bufferedByteCount: Int { buffer.count - start }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if start > 0 {
            if start == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                scanned = 0
                start = 0
            } else if start * 2 >= buffer.count {
                buffer.removeSubrange(0..<start)
                scanned -= start
                start = 0
            }
        }
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next complete response, or nil when more bytes are needed.
    /// - Parameter answersHead: the response answers a HEAD request, so it has no body.
    public mutating func next(answersHead: Bool) throws(HTTPClientError) -> HTTPClientResponse? {
        do {
            switch state {
            case .head:
                guard let (parsed, head) = try parseHeadIfComplete() else { return nil }
                var response = parsed
                let framing = Self.framing(of: response, head, answersHead: answersHead)
                switch framing {
                case .none:
                    return response
                case .length(let length):
                    guard length <= maximumBodyBytes else { throw HTTPClientError.malformedResponse("body too large") }
                    if let complete = takeFixedBody(&response, length: length) { return complete }
                    state = .fixedBody(response, length: length)
                    return nil
                case .chunked:
                    let decoder = ChunkedBodyDecoder(maximumBodyBytes: maximumBodyBytes, maximumFramingBytes: Int.max,
                                                     maximumTrailerBytes: maximumHeadBytes)
                    state = .chunkedBody(response, decoder)
                    return try next(answersHead: answersHead)
                case .untilClose:
                    state = .untilClose(response)
                    return try next(answersHead: answersHead)
                }
            case .fixedBody(var response, let length):
                guard let complete = takeFixedBody(&response, length: length) else { return nil }
                state = .head
                return complete
            case .chunkedBody(var response, var decoder):
                let from = start
                let consumed = try buffer.withUnsafeBufferPointer { (bytes) throws(RequestParseError) -> Int in
                    try decoder.decode(bytes, from: from, to: bytes.count, into: &body)
                }
                start = consumed
                scanned = consumed
                guard decoder.isComplete else {
                    state = .chunkedBody(response, decoder)
                    return nil
                }
                response.body = body
                body = []
                state = .head
                return response
            case .untilClose(let response):
                // Everything until the end of input is body.
                body.append(contentsOf: buffer[start...])
                start = buffer.count
                scanned = start
                guard body.count <= maximumBodyBytes else { throw HTTPClientError.malformedResponse("body too large") }
                state = .untilClose(response)
                return nil
            }
        } catch let error as HTTPClientError {
            throw error
        } catch let error as RequestParseError {
            throw .malformedResponse(error.description)
        } catch {
            throw .malformedResponse("\(error)")
        }
    }

    /// The peer closed: completes a close-delimited body, else nil (and the
    /// caller decides whether a partial response is an error).
    public mutating func finishAtEndOfInput() -> HTTPClientResponse? {
        guard case .untilClose(var response) = state else { return nil }
        body.append(contentsOf: buffer[start...])
        start = buffer.count
        response.body = body
        body = []
        state = .head
        return response
    }

    /// True when a response has begun but is not complete.
    public var hasPartialResponse: Bool {
        if case .head = state { return buffer.count > start }
        return true
    }

    private mutating func takeFixedBody(_ response: inout HTTPClientResponse, length: Int) -> HTTPClientResponse? {
        guard buffer.count - start >= length else { return nil }
        response.body = Array(buffer[start..<(start + length)])
        start += length
        scanned = start
        state = .head
        return response
    }

    /// RFC 9112 §6.3: no body for HEAD, 1xx, 204, 304; chunked when it is
    /// the last coding, else a Transfer-Encoding means "until close"; then
    /// Content-Length; else until close.
    private static func framing(of response: HTTPClientResponse, _ head: HeadFraming, answersHead: Bool) -> Framing {
        if answersHead || response.status < 200 || response.status == 204 || response.status == 304 { return .none }
        if head.transferEncoding { return head.chunked ? .chunked : .untilClose }
        if let length = head.contentLength { return .length(length) }
        return .untilClose
    }

    private mutating func parseHeadIfComplete() throws(HTTPClientError) -> (HTTPClientResponse, HeadFraming)? {
        let limit = maximumHeadBytes
        var start = self.start
        var scanned = self.scanned
        defer {
            self.start = start
            self.scanned = scanned
        }
        return try buffer.withUnsafeBufferPointer { (bytes) throws(HTTPClientError) -> (HTTPClientResponse, HeadFraming)? in
            let headEnd: Int?
            do {
                headEnd = try HTTPSyntax.findHeadEnd(bytes, start: start, scanned: &scanned, limit: limit)
            } catch {
                throw .malformedResponse("head too large")
            }
            guard let headEnd else { return nil }
            let response = try Self.parseHead(bytes, start..<headEnd)
            start = headEnd
            scanned = headEnd
            return response
        }
    }

    /// `HTTP-version SP status-code SP [reason-phrase]`, then field lines.
    private static func parseHead(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(HTTPClientError) -> (HTTPClientResponse, HeadFraming) {
        let (statusLine, firstField) = HTTPSyntax.line(bytes, from: range.lowerBound, end: range.upperBound)
        let p = statusLine.lowerBound
        guard statusLine.count >= 12,
              HTTPSyntax.equalsIgnoringCase(bytes, p..<(p + 5), "http/"),
              bytes[p + 6] == UInt8(ascii: "."), bytes[p + 8] == HTTPSyntax.space,
              let major = HTTPSyntax.hexValue(bytes[p + 5]), major <= 9,
              let minor = HTTPSyntax.hexValue(bytes[p + 7]), minor <= 9 else {
            throw .malformedResponse("status line \(HTTPSyntax.string(bytes, statusLine).debugDescription)")
        }
        var status = 0
        for index in (p + 9)..<(p + 12) {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else {
                throw .malformedResponse("status code in \(HTTPSyntax.string(bytes, statusLine).debugDescription)")
            }
            status = status * 10 + Int(byte - UInt8(ascii: "0"))
        }
        let reasonStart = min(p + 13, statusLine.upperBound)
        let reason = HTTPSyntax.string(bytes, reasonStart..<statusLine.upperBound)
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(8)
        var framing = HeadFraming()
        var position = firstField
        while position < range.upperBound {
            let (field, next) = HTTPSyntax.line(bytes, from: position, end: range.upperBound)
            position = next
            if field.isEmpty { break }
            guard let colon = HTTPSyntax.firstIndex(of: HTTPSyntax.colon, in: bytes, field), colon > field.lowerBound else {
                throw .malformedResponse("header line \(HTTPSyntax.string(bytes, field).debugDescription)")
            }
            let name = field.lowerBound..<colon
            let value = HTTPSyntax.trimmed(bytes, (colon + 1)..<field.upperBound)
            if name.count == 14 && HTTPSyntax.equalsIgnoringCase(bytes, name, "content-length") {
                // Copies must agree (RFC 9110 §8.6); a list of equal values is one.
                var length = -1
                var valid = !value.isEmpty
                HTTPSyntax.forEachListElementNonThrowing(bytes, value) { element in
                    var parsed = 0
                    // More digits than 18 could overflow `parsed`.
                    if element.isEmpty || element.count > 18 { valid = false; return }
                    for index in element {
                        let byte = bytes[index]
                        if byte < UInt8(ascii: "0") || byte > UInt8(ascii: "9") { valid = false; return }
                        parsed = parsed * 10 + Int(byte - UInt8(ascii: "0"))
                    }
                    if length >= 0 && length != parsed { valid = false }
                    length = parsed
                }
                if !valid || (framing.contentLength.map { $0 != length } ?? false) {
                    throw .malformedResponse("invalid Content-Length \(HTTPSyntax.string(bytes, value).debugDescription)")
                }
                framing.contentLength = length
            } else if name.count == 17 && HTTPSyntax.equalsIgnoringCase(bytes, name, "transfer-encoding") {
                var lastIsChunked = false
                HTTPSyntax.forEachListElementNonThrowing(bytes, value) { element in
                    if !element.isEmpty { lastIsChunked = HTTPSyntax.equalsIgnoringCase(bytes, element, "chunked") }
                }
                framing.transferEncoding = true
                framing.chunked = lastIsChunked
            }
            fields.append((HTTPSyntax.string(bytes, name), HTTPSyntax.string(bytes, value)))
        }
        let response = HTTPClientResponse(status: status, reason: reason, version: HTTPVersion(major: major, minor: minor),
                                          headers: HTTPHeaders(fields))
        return (response, framing)
    }

    /// What the fields say about the body, read on bytes while parsing.
    private struct HeadFraming {
        var contentLength: Int?
        var transferEncoding = false
        var chunked = false
    }
}
