import HostResources

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
    /// How many threads serve the connections (`ConnectionWorkers`: one
    /// epoll set, a ready socket wakes one thread, which runs its request
    /// to the end). Default: the available processors (`processorCount`)
    /// plus 4; at least 1.
    public var threadCount: Int
    /// How many of those threads may block at once on work a handler
    /// marks as blocking (`RequestContext.whileBlockingAllowed`: a store
    /// read); the others keep answering everything else. At most
    /// `threadCount - 1`. Default: `threadCount` minus the available
    /// processors, so one thread per core never blocks.
    public var blockingThreadLimit: Int
    public init(host: String = "127.0.0.1", port: Int = 8080, maximumConnections: Int = 10_000,
                maximumConnectionsPerPeer: Int = 0, uncappedPeers: [IPNetwork] = [], limits: HTTPLimits = HTTPLimits(), backlog: Int32 = 1024,
                threadCount: Int = HTTPServerConfiguration.processorCount + 4, blockingThreadLimit: Int? = nil) {
        self.host = host
        self.port = port
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerPeer = maximumConnectionsPerPeer
        self.uncappedPeers = uncappedPeers
        self.limits = limits
        self.backlog = backlog
        self.threadCount = max(1, threadCount)
        self.blockingThreadLimit = min(max(0, blockingThreadLimit ?? self.threadCount - Self.processorCount),
                                       self.threadCount - 1)
    }

    /// The processors this process may use (`AvailableProcessors`: its
    /// affinity and CPU quota, not the machine's count), at least 1.
    public static var processorCount: Int { AvailableProcessors.count }
}
