@preconcurrency import Crypto
import HTTPCore
import WebViewerAssets

/// The web app for people at `/` (the inbox and a conversation screen on
/// API v1), served from the files embedded at build time.
///
/// Decisions:
/// - Paths: `/` is `index.html`; every other file of `web/` is at
///   `/NAME`. Nothing under `/v1`, `/healthz` or `/metrics` is ever
///   answered here, so the API's routes stay the API's.
/// - No token: the files are the same for everyone and hold no data; what
///   the app shows comes from `/v1`, which asks for the token as always.
///   `Host` is still checked first (`BrowserSafety`), so a rebinding page
///   cannot load the app from this server under its own name.
/// - Caching: a strong `ETag` (a SHA-256 of the bytes) and `Cache-Control:
///   no-cache`, so a browser revalidates each time and gets a bodiless 304
///   until the binary changes; a new build is picked up at once.
/// - Headers: a strict `Content-Security-Policy` (everything from this
///   origin only, no inline script or style, no plugins, no framing, no
///   form posts), `X-Content-Type-Options: nosniff`, `Referrer-Policy:
///   no-referrer`, and each file's exact `Content-Type`.
/// - `GET` and `HEAD` only: 405 with `Allow` for any other method.
public struct WebViewer: Sendable {
    /// The policy every viewer answer carries.
    public static let contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; "
        + "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
        + "form-action 'none'; frame-ancestors 'none'"

    /// The metrics label of viewer answers: one, whatever the file.
    static let route = "GET /{viewer file}"

    private struct Asset: Sendable {
        var bytes: [UInt8]
        var contentType: String
        var etag: String
    }

    private let assets: [String: Asset]

    /// The files built into this binary.
    /// Its routes as the router names its own (`METHOD /path`), for the
    /// contract check: `/` and one file under it, HEAD with every GET.
    static let routeLabels = ["GET /", "GET /{file}"]

    public init() {
        self.init(files: WebViewerFile.all)
    }

    init(files: [WebViewerFile]) {
        var assets: [String: Asset] = [:]
        for file in files {
            let digest = SHA256.hash(data: file.bytes)
            let hex = digest.prefix(16).map { byte in
                let text = String(byte, radix: 16)
                return byte < 16 ? "0" + text : text
            }.joined()
            let asset = Asset(bytes: file.bytes, contentType: Self.contentType(ofFileNamed: file.name), etag: "\"\(hex)\"")
            assets["/" + file.name] = asset
            if file.name == "index.html" { assets["/"] = asset }
        }
        self.assets = assets
    }

    /// The viewer's answer to `request`, or nil when its path is not a
    /// viewer file (the API then routes it).
    func response(to request: HTTPRequest) -> HTTPResponse? {
        // Every API request passes here first: no lookup for them.
        // Over the bytes: `Substring.hasPrefix` compares Characters (1.5% of
        // a 304's CPU in `perf`).
        guard !request.path.utf8.starts(with: "/v1/".utf8),
              let asset = assets[String(request.path)] else { return nil }
        guard request.method == .get || request.method == .head else {
            return APIError.methodNotAllowed(request.method, allow: [.get, .head]).response(route: Self.route)
        }
        var headers: HTTPHeaders = [
            "Content-Type": asset.contentType,
            "ETag": asset.etag,
            "Cache-Control": "no-cache",
            "Content-Security-Policy": Self.contentSecurityPolicy,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
        ]
        if Self.matches(request.headers.values(of: "If-None-Match"), etag: asset.etag) {
            headers.remove(name: "Content-Type")
            return HTTPResponse(status: .notModified, headers: headers, route: Self.route)
        }
        return HTTPResponse(status: .ok, headers: headers, body: asset.bytes, route: Self.route)
    }

    /// RFC 9110 §13.1.2: `*`, or a list naming `etag` (weak comparison, so
    /// `W/"..."` matches too).
    static func matches(_ values: [String], etag: String) -> Bool {
        for value in values {
            for candidate in value.split(separator: ",") {
                var tag = candidate.trimmingSpaces
                if tag == "*" { return true }
                if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
                if tag == etag { return true }
            }
        }
        return false
    }

    static func contentType(ofFileNamed name: String) -> String {
        switch name.split(separator: ".").last ?? "" {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "svg": "image/svg+xml"
        default: "text/plain; charset=utf-8"
        }
    }
}

private extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
