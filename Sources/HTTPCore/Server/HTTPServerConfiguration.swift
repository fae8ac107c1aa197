import Glibc

/// Where and how the HTTP server listens, each setting with its default.
public struct HTTPServerConfiguration: Sendable {
    /// An IPv4 or IPv6 literal, or `localhost`. Default: `127.0.0.1`.
    public var host: String
    /// 0 asks the system for any free port; `HTTPServer.port` says which.
    public var port: Int
    /// Past this many open client connections a new one gets 503 and is closed.
    public var maximumConnections: Int
    /// Past this many open connections from one peer address a new one from
    /// it gets 503 and is closed, so one client cannot take every slot;
    /// 0: no such limit (behind a proxy that limits connections itself,
    /// every client shares the proxy's address).
    public var maximumConnectionsPerPeer: Int
    /// Peers `maximumConnectionsPerPeer` does not apply to: trusted proxies,
    /// whose connections carry many clients.
    public var uncappedPeers: [IPNetwork]
    public var limits: HTTPLimits
    /// The listen(2) backlog.
    public var backlog: Int32
    /// How many event loops (serial queues, each polling its connections'
    /// sockets) share the connections, round-robin. Default: the number of
    /// online processors, so each core can run one loop; at least 1.
    public var eventLoopCount: Int

    public init(host: String = "127.0.0.1", port: Int = 8080, maximumConnections: Int = 10_000,
                maximumConnectionsPerPeer: Int = 0, uncappedPeers: [IPNetwork] = [], limits: HTTPLimits = HTTPLimits(), backlog: Int32 = 1024,
                eventLoopCount: Int = HTTPServerConfiguration.defaultEventLoopCount) {
        self.host = host
        self.port = port
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerPeer = maximumConnectionsPerPeer
        self.uncappedPeers = uncappedPeers
        self.limits = limits
        self.backlog = backlog
        self.eventLoopCount = eventLoopCount
    }

    /// The online processor count, at least 1.
    public static var defaultEventLoopCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
