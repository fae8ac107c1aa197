/// Where and how the HTTP server listens, each setting with its default.
public struct HTTPServerConfiguration: Sendable {
    /// An IPv4 or IPv6 literal, or `localhost`. Default: `127.0.0.1`.
    public var host: String
    /// 0 asks the system for any free port; `HTTPServer.port` says which.
    public var port: Int
    /// Past this many open client connections a new one gets 503 and is closed.
    public var maximumConnections: Int
    public var limits: HTTPLimits
    /// The listen(2) backlog.
    public var backlog: Int32

    public init(host: String = "127.0.0.1", port: Int = 8080, maximumConnections: Int = 10_000,
                limits: HTTPLimits = HTTPLimits(), backlog: Int32 = 1024) {
        self.host = host
        self.port = port
        self.maximumConnections = maximumConnections
        self.limits = limits
        self.backlog = backlog
    }
}
