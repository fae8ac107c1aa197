/// Writes a response head (and body) as bytes, adding the fields the
/// connection owns so a handler cannot get them wrong: `Content-Length`,
/// `Date` and `Connection`. A handler's own copies of those (and of
/// `Transfer-Encoding`) are dropped, and CR, LF or NUL in a value become
/// spaces, so no handler can split a response.
enum ResponseSerializer {
    /// How the connection continues after this response.
    enum ConnectionHeader {
        /// Keep-alive on HTTP/1.1: nothing to say.
        case none
        /// Kept open for an HTTP/1.0 client that asked: `Connection: keep-alive`.
        case keepAlive
        /// Closing after it: `Connection: close`.
        case close
    }

    /// Appends status line, fields and (unless `omitBody`) the body.
    /// - Parameters:
    ///   - omitBody: a response to HEAD: `Content-Length` still gives the
    ///     body's length (what GET would send), but no body follows.
    ///     A streamed response (`HTTPResponse.stream`) has no
    ///     `Content-Length` and must be sent with `connection: .close`.
    static func append(_ response: HTTPResponse, omitBody: Bool, connection: ConnectionHeader,
                       to output: inout [UInt8]) {
        let code = response.status.code
        output.reserveCapacity(output.count + 256 + (omitBody ? 0 : response.body.count))
        if response.status == .ok {
            output.appendLiteral(Literal.ok)
        } else {
            output.appendLiteral(Literal.version)
            appendStatusCode(code, to: &output)
            output.append(HTTPSyntax.space)
            appendSanitized(response.status.reason, to: &output)
            output.appendLiteral(Literal.crlf)
        }
        for field in response.headers.fields where !isConnectionOwned(field.name) {
            appendSanitized(field.name, to: &output)
            output.appendLiteral(Literal.colonSpace)
            appendSanitized(field.value, to: &output)
            output.appendLiteral(Literal.crlf)
        }
        // RFC 9110 §8.6: never a Content-Length on 1xx or 204; on 304 it would
        // have to describe the unsent representation, so it is left out.
        let hasNoContent = code < 200 || code == 204 || code == 304
        // A stream's length is unknown: its body ends with the connection.
        if !hasNoContent && response.stream == nil {
            output.appendLiteral(Literal.contentLength)
            appendDecimal(response.body.count, to: &output)
            output.appendLiteral(Literal.crlf)
        }
        HTTPDate.appendHeaderLine(to: &output)
        switch connection {
        case .none: break
        case .keepAlive: output.appendLiteral(Literal.keepAlive)
        case .close: output.appendLiteral(Literal.close)
        }
        output.appendLiteral(Literal.crlf)
        if !omitBody && !hasNoContent { output.append(contentsOf: response.body) }
    }

    /// Constant pieces as static bytes. Appending a String's UTF8View goes
    /// through a generic path that showed up in profiles, and a constant
    /// array costs a retain and a release at each of the dozen appends of
    /// every response (about 1% of a deep page's samples in `perf`).
    enum Literal {
        static let ok: StaticString = "HTTP/1.1 200 OK\r\n"
        static let version: StaticString = "HTTP/1.1 "
        static let crlf: StaticString = "\r\n"
        static let colonSpace: StaticString = ": "
        static let contentLength: StaticString = "Content-Length: "
        static let keepAlive: StaticString = "Connection: keep-alive\r\n"
        static let close: StaticString = "Connection: close\r\n"
    }

    /// The interim answer to `Expect: 100-continue`.
    static let continueHead = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    private static func isConnectionOwned(_ name: String) -> Bool {
        switch name.utf8.count {
        case 4: name.caseInsensitiveEquals("Date")
        case 10: name.caseInsensitiveEquals("Connection")
        case 14: name.caseInsensitiveEquals("Content-Length")
        case 17: name.caseInsensitiveEquals("Transfer-Encoding")
        default: false
        }
    }

    @inline(__always)
    private static func appendSanitized(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            var clean = true
            for byte in bytes where byte == HTTPSyntax.cr || byte == HTTPSyntax.lf || byte == 0 { clean = false }
            if clean {
                output.append(contentsOf: bytes)
            } else {
                for byte in bytes {
                    output.append(byte == HTTPSyntax.cr || byte == HTTPSyntax.lf || byte == 0 ? HTTPSyntax.space : byte)
                }
            }
        }
    }

    private static func appendStatusCode(_ code: Int, to output: inout [UInt8]) {
        let code = min(max(code, 100), 999)
        output.append(UInt8(ascii: "0") + UInt8(code / 100))
        output.append(UInt8(ascii: "0") + UInt8(code / 10 % 10))
        output.append(UInt8(ascii: "0") + UInt8(code % 10))
    }

    static func appendDecimal(_ value: Int, to output: inout [UInt8]) {
        if value == 0 {
            output.append(UInt8(ascii: "0"))
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var remaining = value.magnitude
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while remaining > 0 {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
                count += 1
            }
            if value < 0 { output.append(UInt8(ascii: "-")) }
            output.append(contentsOf: buffer[(20 - count)...])
        }
    }
}

extension Array where Element == UInt8 {
    /// Appends a literal's bytes, with no reference counted storage touched.
    @inline(__always)
    mutating func appendLiteral(_ literal: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}
