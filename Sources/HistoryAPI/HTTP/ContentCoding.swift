import HTTPCore

/// Which content coding a request's answer gets (docs/API.md, "Conditional
/// requests and compression"): gzip when `Accept-Encoding` accepts it and
/// the JSON is 1 KiB or more, else identity.
///
/// Decisions:
/// - `Accept-Encoding` is read with its q-values (RFC 9110 §12.5.3):
///   `gzip;q=0` refuses gzip, `*` stands for gzip when gzip is not named,
///   `x-gzip` is gzip. No header, or one that does not parse: identity.
/// - Below 1 KiB the gzip header and the deflate overhead save too little
///   to pay for the CPU; the answer stays identity whatever was accepted.
/// - Every JSON answer carries `Vary: Accept-Encoding`, compressed or not:
///   its bytes (or its `ETag`, see `EntityTag`) depend on the header, and a
///   cache must not hand one client's coding to another.
/// - Never for a 304 or a 204 (no body), nor for a stream
///   (`text/event-stream`): only complete JSON answers come through here.
/// - The response budget (`--max-response-bytes`) bounds the JSON before
///   compression: the writers apply it, this only codes what they wrote.
enum ContentCoding {
    /// The smallest JSON body that is compressed.
    static let minimumCompressedBytes = 1024

    /// true when the request accepts gzip with a q-value above 0.
    /// Costs one header lookup when the request has no `Accept-Encoding`.
    static func acceptsGzip(_ headers: HTTPHeaders) -> Bool {
        guard headers["Accept-Encoding"] != nil else { return false }
        var gzip: Bool?
        var any: Bool?
        for value in headers.values(of: "Accept-Encoding") {
            for member in value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
                let parts = member.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
                guard let name = parts.first.map(trimmed) else { continue }
                let accepted = parts.dropFirst().allSatisfy { parameter in
                    let parameter = trimmed(parameter)
                    guard parameter.count >= 2, parameter.first! | 0x20 == UInt8(ascii: "q"),
                          parameter[parameter.index(after: parameter.startIndex)] == UInt8(ascii: "=") else { return true }
                    return isPositive(qvalue: parameter.dropFirst(2))
                }
                if equals(name, "gzip") || equals(name, "x-gzip") {
                    gzip = (gzip ?? false) || accepted
                } else if equals(name, "*") {
                    any = (any ?? false) || accepted
                }
            }
        }
        return gzip ?? any ?? false
    }

    /// Codes a JSON answer for a request that accepts gzip (or not):
    /// `Vary` always, gzip from 1 KiB.
    static func encode(_ response: inout HTTPResponse, acceptsGzip: Bool) {
        guard acceptsGzip, response.body.count >= minimumCompressedBytes,
              response.status.code != 204, response.status.code != 304,
              let compressed = Gzip.compress(response.body) else {
            label(&response, gzipped: false)
            return
        }
        response.body = compressed
        label(&response, gzipped: true)
    }

    /// The headers of a coded body (`encode`'s, or a kept page's):
    /// `gzipped` says whether it is gzip.
    static func label(_ response: inout HTTPResponse, gzipped: Bool) {
        response.headers.add(name: "Vary", value: "Accept-Encoding")
        if gzipped { response.headers.add(name: "Content-Encoding", value: "gzip") }
    }

    /// Whether `encode` gzipped `response`'s body.
    static func isGzipped(_ response: HTTPResponse) -> Bool {
        response.headers["Content-Encoding"] != nil
    }

    /// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`:
    /// above 0 when any digit is not 0. Malformed: not above 0.
    private static func isPositive(qvalue: Substring.UTF8View) -> Bool {
        for byte in qvalue {
            switch byte {
            case UInt8(ascii: "1")...UInt8(ascii: "9"): return true
            case UInt8(ascii: "0"), UInt8(ascii: "."): continue
            default: return false
            }
        }
        return false
    }

    private static func trimmed(_ bytes: Substring.UTF8View) -> Substring.UTF8View {
        var bytes = bytes
        while let first = bytes.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { bytes = bytes.dropLast() }
        return bytes
    }

    /// ASCII case-insensitive comparison with a lowercase `name`.
    private static func equals(_ bytes: Substring.UTF8View, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        return zip(bytes, UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)).allSatisfy { a, b in
            a == b || (a | 0x20 == b && b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z"))
        }
    }
}
