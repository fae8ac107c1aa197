import HTTPCore

/// The conditional GET and the content coding, as the routes answer them
/// (`EntityTag`, `ContentCoding`). A request with neither
/// `If-None-Match` nor `Accept-Encoding` pays two header lookups.
extension APIRequest {
    /// Whether this request's JSON answers may be gzip (and so which `ETag`).
    var acceptsGzip: Bool { ContentCoding.acceptsGzip(http.headers) }

    /// Whether the request is conditional: only then is it worth deciding
    /// a 304 before reading what the answer would hold.
    var hasIfNoneMatch: Bool { http.headers["If-None-Match"] != nil }

    /// The 304 with `tag` when `If-None-Match` matches it; nil when it does not.
    func notModified(_ tag: EntityTag) -> Answer? {
        guard tag.isMatched(byIfNoneMatchIn: http.headers) else { return nil }
        return answer(HTTPResponse(status: .notModified, headers: ["ETag": tag.value, "Vary": "Accept-Encoding"]))
    }

    /// A 200 JSON answer with its `ETag`; 304 instead when `If-None-Match`
    /// already names it (the answers whose tag is known only once encoded).
    func json(_ body: [UInt8], etag: EntityTag) -> Answer {
        notModified(etag) ?? json(.ok, body, headers: ["ETag": etag.value])
    }
}
