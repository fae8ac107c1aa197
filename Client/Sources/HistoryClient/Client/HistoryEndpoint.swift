import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request of the contract before it meets a base URL: method, path
/// segments (not yet escaped), query and body.
struct HistoryEndpoint: Sendable {
    var method: String
    var path: [String]
    var query: [(String, String)] = []
    var body: Data?
    /// Overrides the configured request timeout (long-polls; a stream's idle limit).
    var timeout: Duration?
    /// Headers of this request alone, set last (a stream's `Accept` and `Last-Event-ID`).
    var headers: [String: String] = [:]
    /// A GET of a resource or a page, whose answer carries an `ETag`: asked
    /// again, it sends `If-None-Match` (``RevalidationCache``).
    var revalidates = false

    /// The route and query, what a held answer is found by.
    var revalidationKey: String {
        path.map(Self.escape).joined(separator: "/") + "?"
            + query.map { "\(Self.escape($0.0))=\(Self.escape($0.1))" }.joined(separator: "&")
    }

    /// RFC 3986 unreserved characters: the only ones a path segment keeps as is.
    /// A conversation id the contract allows never needs escaping; one it does
    /// not allow is escaped so it reaches the server as one segment (and gets
    /// its 404) instead of changing the route.
    private static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)

    static func escape(_ segment: String) -> String {
        var escaped = ""
        for byte in segment.utf8 {
            if unreserved.contains(byte) {
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                escaped += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return escaped
    }

    func urlRequest(baseURL: URL, timeout: Duration, headers: [String: String]) throws -> URLRequest {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else {
            throw HistoryClientError.invalidRequest(reason: "base URL \(baseURL) cannot be parsed")
        }
        var prefix = components.percentEncodedPath
        while prefix.hasSuffix("/") { prefix.removeLast() }
        components.percentEncodedPath = prefix + "/" + path.map(Self.escape).joined(separator: "/")
        components.percentEncodedQuery = query.isEmpty ? nil
            : query.map { "\(Self.escape($0.0))=\(Self.escape($0.1))" }.joined(separator: "&")
        guard let url = components.url else {
            throw HistoryClientError.invalidRequest(reason: "no URL for \(path.joined(separator: "/"))")
        }
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData,
                                 timeoutInterval: timeout.seconds)
        request.httpMethod = method
        for (name, value) in headers {
            request.setValue(value, forHTTPHeaderField: name)
        }
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        for (name, value) in self.headers {
            request.setValue(value, forHTTPHeaderField: name)
        }
        if let body {
            request.httpBody = body
            request.setValue("application/json; charset=utf-8", forHTTPHeaderField: "Content-Type")
        }
        return request
    }
}
