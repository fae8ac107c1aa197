import HTTPCore

/// What keeps a browser from being turned against the server: the `Host`
/// allow-list of a loopback bind, the JSON-only request bodies, and CORS
/// for the listed origins only.
///
/// - DNS rebinding: a page on `evil.example` whose name is made to
///   resolve to 127.0.0.1 reaches a loopback server with `Host:
///   evil.example`; a loopback bind answers only the names that mean
///   "this machine" (and `--allowed-host` names), so such requests get 421
///   `misdirected_request`. A request in absolute form
///   (`GET http://evil.example/...`) is checked by the target's host, which
///   the parser puts in place of `Host` (RFC 9112 §3.2.2). An HTTP/1.1
///   request without `Host` never gets here (400 from the parser); an
///   HTTP/1.0 one is no browser's and passes. On other binds the server is
///   reachable anyway, so any `Host` passes.
/// - Cross-site form posts: a browser sends `text/plain` or a form type
///   without a preflight, never `application/json`; requiring JSON bodies
///   (415 `unsupported_media_type`) keeps such "simple requests" from
///   changing anything.
/// - CORS: only a listed origin gets `Access-Control-Allow-Origin` (its own
///   value, never `*`) and its preflights answered; any other origin gets no
///   CORS header at all, so its browser refuses to show it the answers.
///   With any origin listed, every answer carries `Vary: Origin`, listed
///   origin or not, so a cache never hands one origin's answer to another.
public struct BrowserSafety: Sendable {
    /// Host names (lowercased, without port) a loopback bind answers; nil:
    /// any `Host` passes.
    let allowedHosts: Set<String>?
    /// Origins (lowercased) that get CORS headers.
    let corsOrigins: Set<String>

    /// The names a loopback bind always answers.
    public static let loopbackNames: Set<String> = ["localhost", "127.0.0.1", "[::1]"]

    /// How long a browser may cache a preflight's answer.
    static let preflightMaxAge = 600

    /// - Parameters:
    ///   - loopbackBind: true when the server listens on a loopback address
    ///     only; then `Host` is checked.
    ///   - allowedHosts: names beyond `localhost`, `127.0.0.1` and `[::1]`.
    ///   - corsOrigins: exact origins such as `https://app.example`.
    public init(loopbackBind: Bool, allowedHosts: [String] = [], corsOrigins: [String] = []) {
        self.allowedHosts = loopbackBind
            ? Self.loopbackNames.union(allowedHosts.map { Self.hostName(of: $0.lowercased()) ?? $0.lowercased() })
            : nil
        self.corsOrigins = Set(corsOrigins.map { $0.lowercased() })
    }

    /// No `Host` check and no CORS: for a responder built without a bind in mind.
    public static let permissive = BrowserSafety(loopbackBind: false)

    // MARK: - Host

    /// 421 when `Host` names something this loopback server is not.
    func hostError(_ request: HTTPRequest) -> APIError? {
        guard let allowedHosts else { return nil }
        let values = request.headers.values(of: "Host")
        guard let value = values.first else { return nil }
        guard let name = Self.asciiHostName(of: value) ?? Self.hostName(of: value.lowercased()),
              allowedHosts.contains(name) else {
            return APIError.misdirectedRequest(value)
        }
        return nil
    }

    /// `hostName(of: host.lowercased())` for an all-ASCII `host` whose
    /// name is well formed, over its bytes; nil otherwise, and then the
    /// caller takes the general path. Every request passes here on a
    /// loopback bind, and the `Character` walk of `hostName` with the
    /// lowercasing cost 3% of a deep page's instructions (callgrind).
    /// Non-ASCII goes the general way because Unicode lowercasing can turn
    /// it into ASCII (the Kelvin sign becomes `k`).
    static func asciiHostName(of host: String) -> String? {
        var host = host
        return host.withUTF8 { bytes -> String? in
            guard !bytes.isEmpty, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            var nameEnd = bytes.count
            var portStart = bytes.count
            if bytes[0] == UInt8(ascii: "[") {
                guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return nil }
                nameEnd = close + 1
                portStart = nameEnd
            } else if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
                nameEnd = colon
                portStart = colon
            }
            if portStart < bytes.count {
                let port = bytes[(portStart + 1)...]
                guard bytes[portStart] == UInt8(ascii: ":"), !port.isEmpty, port.count <= 5,
                      port.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            }
            guard nameEnd > 0 else { return nil }
            return String(unsafeUninitializedCapacity: nameEnd) { name in
                for index in 0..<nameEnd {
                    let byte = bytes[index]
                    name[index] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                }
                return nameEnd
            }
        }
    }

    /// `name` of `name[:port]`, `[v6]` of `[v6][:port]`; nil when malformed.
    static func hostName(of host: String) -> String? {
        let name: Substring
        let rest: Substring
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            name = host[...close]
            rest = host[host.index(after: close)...]
        } else if let colon = host.firstIndex(of: ":") {
            name = host[..<colon]
            rest = host[colon...]
        } else {
            name = host[...]
            rest = ""
        }
        if !rest.isEmpty {
            let port = rest.dropFirst()
            guard rest.first == ":", !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber) else {
                return nil
            }
        }
        guard !name.isEmpty else { return nil }
        return String(name)
    }

    // MARK: - Content-Type

    /// False when a `POST`, `PUT` or `PATCH` carries a body that does not say
    /// it is JSON. A body-less request has nothing to declare (the route then
    /// reads `{}` or answers its own `invalid_json`).
    static func acceptsBody(of request: HTTPRequest) -> Bool {
        guard request.method == .post || request.method == .put || request.method == .patch,
              !request.body.isEmpty else { return true }
        let values = request.headers.values(of: "Content-Type")
        guard values.count == 1 else { return false }
        return isJSON(values[0])
    }

    /// `application/json`, optionally with `charset=utf-8`, in any case.
    static func isJSON(_ contentType: String) -> Bool {
        var parts = contentType.split(separator: ";", omittingEmptySubsequences: false).makeIterator()
        guard let mediaType = parts.next(), trimmed(mediaType).lowercased() == "application/json" else { return false }
        while let parameter = parts.next() {
            let pair = trimmed(parameter)
            if pair.isEmpty { continue }
            guard let equals = pair.firstIndex(of: "=") else { return false }
            let name = trimmed(pair[..<equals]).lowercased()
            var value = trimmed(pair[pair.index(after: equals)...])
            if value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") {
                value = value.dropFirst().dropLast()
            }
            if name == "charset" && value.lowercased() != "utf-8" { return false }
        }
        return true
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }

    // MARK: - CORS

    /// The request's `Origin` when it is a listed one.
    func listedOrigin(of request: HTTPRequest) -> String? {
        guard !corsOrigins.isEmpty, let origin = request.headers["Origin"],
              corsOrigins.contains(origin.lowercased()) else { return nil }
        return origin
    }

    /// True when some origin is listed: then every answer varies by `Origin`.
    var hasCORS: Bool { !corsOrigins.isEmpty }

    /// The response headers a browser app may read beside the simple ones:
    /// where a created thing is, why a token was refused, what a path
    /// allows, the version to revalidate, and when to retry (rate limits).
    static let exposedHeaders = "Location, WWW-Authenticate, Allow, ETag, Retry-After, "
        + "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset"

    /// The headers every answer to a listed origin carries.
    static func addCORSHeaders(origin: String, to response: inout HTTPResponse) {
        response.headers.replaceOrAdd(name: "Access-Control-Allow-Origin", value: origin)
        response.headers.replaceOrAdd(name: "Access-Control-Expose-Headers", value: exposedHeaders)
        addVaryOrigin(to: &response)
    }

    /// `Vary: Origin`, once.
    static func addVaryOrigin(to response: inout HTTPResponse) {
        let varies = response.headers.values(of: "Vary").contains { value in
            value.split(separator: ",").contains { trimmed($0).lowercased() == "origin" }
        }
        if !varies { response.headers.add(name: "Vary", value: "Origin") }
    }

    /// The 204 answer to a listed origin's preflight of a path taking `methods`.
    static func preflight(methods: [HTTPMethod], route: String) -> HTTPResponse {
        HTTPResponse(status: .noContent,
                     headers: ["Access-Control-Allow-Methods": methods.map(\.rawValue).joined(separator: ", "),
                               "Access-Control-Allow-Headers": "Authorization, Content-Type",
                               "Access-Control-Max-Age": "\(preflightMaxAge)"],
                     route: route)
    }
}
