/// A complete request: head and the whole body (bodies are capped at
/// `HTTPLimits.maximumBodyBytes`, so buffering them is bounded).
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// The request target as sent, e.g. `/v1/conversations/a/messages?limit=5`.
    public var target: String
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(method: HTTPMethod, target: String, version: HTTPVersion = .http1_1,
                headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// The target before `?`, still percent-encoded.
    ///
    /// Searched on UTF-8 bytes (an ASCII `?` is never inside a multi-byte
    /// character): the Character search does grapheme breaking and showed
    /// up in the page profile.
    public var path: Substring {
        queryMark.map { target[..<$0] } ?? target[...]
    }

    /// The target after `?`, nil when there is no `?`.
    public var query: Substring? {
        queryMark.map { target[target.utf8.index(after: $0)...] }
    }

    /// Where the `?` is, searched in the contiguous UTF-8 when there is
    /// some (always, for a parsed target): through the view's iterator a
    /// search cost about 1,100 instructions, and a page's request asks for
    /// its path four times (callgrind, docs/performance.md).
    private var queryMark: String.Index? {
        let utf8 = target.utf8
        if let offset = utf8.withContiguousStorageIfAvailable({ $0.firstIndex(of: UInt8(ascii: "?")) }) {
            return offset.map { utf8.index(utf8.startIndex, offsetBy: $0) }
        }
        return utf8.firstIndex(of: UInt8(ascii: "?"))
    }
}
